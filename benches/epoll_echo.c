/* The readiness-loop ceiling: a minimal single-threaded epoll server that
 * speaks `serve echo`'s protocol (a request ends at NUL or LF, a CR before
 * LF is dropped, the reply is the request reversed with the same
 * terminator). No locks, no allocation per request, one read and one write
 * per readable event. benches/strategies.py compares serverlab's strategies
 * with it (docs/strategies.md).
 * Build: cc -O2 -o target/epoll_echo benches/epoll_echo.c
 * Run:   taskset -c 0 target/epoll_echo PORT   (prints "listening on 127.0.0.1:PORT") */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF 65536
struct conn { int fd, len; char in[BUF], out[BUF * 2]; };

static int serve(struct conn *c) {  /* read all, answer whole frames; -1: close */
    for (;;) {
        int n = read(c->fd, c->in + c->len, BUF - c->len), start = 0, o = 0;
        if (n == 0 || (n < 0 && c->len == BUF)) return -1;
        if (n < 0) return 0;  /* EAGAIN: drained (edge-triggered) */
        c->len += n;
        for (int i = 0; i < c->len; i++) {
            if (c->in[i] != 0 && c->in[i] != '\n') continue;
            int end = i;
            if (c->in[i] == '\n' && end > start && c->in[end - 1] == '\r') end--;
            for (int j = end - 1; j >= start; j--) c->out[o++] = c->in[j];
            c->out[o++] = c->in[i];
            start = i + 1;
        }
        for (int w = 0; w < o;) {  /* replies are small; a full socket would block the bench, not lose data */
            int k = write(c->fd, c->out + w, o - w);
            if (k <= 0) return -1;
            w += k;
        }
        memmove(c->in, c->in + start, c->len - start);
        c->len -= start;
    }
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 0, one = 1, ep = epoll_create1(0);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    socklen_t al = sizeof a;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (void *)&a, sizeof a) || listen(ls, 1024)) { perror("bind"); return 1; }
    getsockname(ls, (void *)&a, &al);
    printf("listening on 127.0.0.1:%d\n", ntohs(a.sin_port));
    fflush(stdout);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}, evs[256];
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    c = calloc(1, sizeof *c);
                    c->fd = fd;
                    struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
                }
            } else if (serve(c) < 0) {
                close(c->fd);
                free(c);
            }
        }
    }
}
