/* One RESP client, lock-step: sends a command, reads its reply, N times,
 * and prints the operations per second. For benches/big_values.py, where
 * redis-benchmark cannot vary a number argument (its __rand_int__ is
 * zero-padded, which SETBIT's offset refuses).
 *
 * Usage: resp_lockstep PORT N ARG...
 * In an argument, "{R}" (R a number) becomes a random integer in [0, R)
 * and "{alt}" the request's number modulo 2, each request anew.
 * Exits 1 at the first error reply, printing it.
 * Built by benches/big_values.py with cc. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char in[1 << 16];
static size_t have, at;

static void fill(int fd) {
    if (at > 0) {
        memmove(in, in + at, have - at);
        have -= at;
        at = 0;
    }
    ssize_t n = read(fd, in + have, sizeof in - have);
    if (n <= 0) {
        fprintf(stderr, "the server closed\n");
        exit(1);
    }
    have += (size_t)n;
}

/* The next line's end (the \r), reading as needed. */
static size_t line_end(int fd) {
    for (;;) {
        char *nl = memchr(in + at, '\r', have - at);
        if (nl && (size_t)(nl - in) + 1 < have)
            return (size_t)(nl - in);
        fill(fd);
    }
}

/* Reads one reply: a line, or a bulk string (skipped). */
static void reply(int fd) {
    size_t end = line_end(fd);
    char kind = in[at];
    if (kind == '-') {
        fprintf(stderr, "%.*s\n", (int)(end - at), in + at);
        exit(1);
    }
    long n = kind == '$' ? strtol(in + at + 1, NULL, 10) : -1;
    at = end + 2;
    if (n < 0)
        return;
    size_t left = (size_t)n + 2;
    while (left > 0) {
        if (at == have)
            fill(fd);
        size_t take = have - at < left ? have - at : left;
        at += take;
        left -= take;
    }
}

/* Appends argument `a` with its placeholders filled, as a bulk string. */
static size_t arg(char *out, const char *a, long i) {
    char buf[512];
    size_t len = 0;
    while (*a && len < sizeof buf - 32) {
        if (*a == '{') {
            const char *close = strchr(a, '}');
            if (close && strncmp(a, "{alt}", 5) == 0) {
                len += (size_t)sprintf(buf + len, "%ld", i % 2);
                a = close + 1;
                continue;
            }
            if (close) {
                long r = strtol(a + 1, NULL, 10);
                len += (size_t)sprintf(buf + len, "%ld", r > 0 ? random() % r : 0);
                a = close + 1;
                continue;
            }
        }
        buf[len++] = *a++;
    }
    return (size_t)sprintf(out, "$%zu\r\n%.*s\r\n", len, (int)len, buf);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: resp_lockstep PORT N ARG...\n");
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("connect");
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    long n = atol(argv[2]);
    int args = argc - 3;
    static char req[1 << 16];
    srandom(12345);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        size_t len = (size_t)sprintf(req, "*%d\r\n", args);
        for (int j = 0; j < args; j++)
            len += arg(req + len, argv[3 + j], i);
        if (write(fd, req, len) != (ssize_t)len) {
            perror("write");
            return 1;
        }
        reply(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%.1f\n", (double)n / s);
    return 0;
}
