#!/usr/bin/env python3
"""Write the committed seed corpus: a few dozen small inputs per fuzz target,
valid requests and replies from the wire contract (docs/protocols/) and the tests, and edge cases.
Each seed is the target's header bytes (see its doc comment) and then protocol
bytes. Run from anywhere; it rewrites fuzz/seeds/<target>/ in place."""

import hashlib
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

BOARD = [
    b"POST@Solar system#The dark side of the @moon is #dark.", b"POST@#x",
    b"POST@night_sky#cloudy!", b"POST@Solar system#Mercury, Venus, Earth", b"LIST",
    b"COUNT@Solar system", b"COUNT@solar_system", b"READ@#0", b"READ@Solar system#1",
    b"READ@night_sky#2", b"READ@a#1#2", b"POST@a@b#c", b"POST@a#", b"post@a#b", b"LIST ",
    b"AAA", b"EXIT", b"EXIT ", b"", b"READ@t#0007", b"READ@t#99999999999999999999",
    b"READ@a#-1", b"COUNT@", b"POST@a#b\rc", b"POST@t#m#@#", b"POST@\xff\xfe#\x80\x81",
]
BUCKET = [
    b"5,10", b"0,3", b"007,0", b"18446744073709551615,18446744073709551615", b"", b"5", b",",
    b"5,", b",5", b"-1,5", b"+1,5", b"1, 5", b"1,5,6", b"a,b", b"0x1,5", b"1\r,5", b"1,5\0",
    b"18446744073709551616,1", b"1,18446744073709551616", b"99999999999999999999999,x", b"60,1", b"0,0",
]
KV = [
    b"GET /apple HTTP/1.1\r\nHost: x\r\n\r\n",
    b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    b"POST /k HTTP/1.1\r\nHost: x\r\ncontent-length:0\r\n\r\n",
    b"GET /k HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET /k HTTP/1.0\r\n\r\n",
    b"GET /k HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
    b"HEAD /k HTTP/1.1\r\nHost: x\r\n\r\n",
    b"DELETE /k HTTP/1.1\r\nHost: x\r\n\r\n",
    b"PATCH /k HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz",
    b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /_/health HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /_/stats HTTP/1.1\r\nHost: x\r\n\r\n",
    b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
    b"GET /k HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"5d41402abc4b2a76b9719d911017c592\"\r\n\r\n",
    b"GET /k HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\n\r\n",
    b"\r\n\nGET /k HTTP/1.1\nHost: x\n\n",
    b"GET /a%20b%2Fc?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET http://h:1/k HTTP/1.1\r\nHost: x\r\n\r\n",
    b"PUT /k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
    b"GET /k HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    b"GET /k HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n",
    b"GET /k HTTP/3.0\r\nHost: x\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    b"GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /" + b"a" * 40 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
]
RESPONSES = [
    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nETag: \"bda9643ac6601722a28f238714274da4\"\r\n\r\nred",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.0 304 Not Modified\r\nContent-Length: 9\r\nETag: \"x\"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    b"HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\nConnection: close\r\n\r\nnot found\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nre",
]
RESP = [
    b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n",
    b"GET k\r\n", b"SET k \"a\\r\\nb\\x41\" 'it\\'s'\r\n", b"PING\n", b"\r\n", b"*0\r\n", b"*-1\r\n",
    b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", b"*2\r\n$4\r\nECHO\r\n$-1\r\n", b"*2\r\n:1\r\n",
    b"*1\r\n$3\r\nabcd\r\n", b"*01\r\n", b"*1\r\n$01\r\n", b"*1\rx", b"$3\r\nGET\r\n", b"SET k \"v\"x\r\n",
    b"SET k 'v\r\n", b"*99999999999999999999\r\n", b"*2\r\n$3\r\nGET\r\n$1\r\nk", b"a\0b c\r\n",
    b"INCR n\r\nINCRBY n -5\r\nDECRBY n 9223372036854775807\r\nDECR n\r\nINCR n\r\n",
    b"RPUSH l a b c\r\nLPUSH l z\r\nLRANGE l 0 -1\r\nLINDEX l -1\r\nLLEN l\r\nLPOP l\r\nRPOP l 2\r\nLPOP l 0\r\n",
    b"SET s x\r\nLPUSH s a\r\nINCR s\r\nGET l\r\nRPUSH l a\r\nGET l\r\nMGET s l nope\r\n",
    b"SET k v NX\r\nSET k w XX\r\nSET k w NX XX\r\nSET k v EX 10\r\nSET k\r\nDEL k k q\r\nEXISTS k k\r\n",
    b"MSET a 1 b 2\r\nMSET a\r\nDBSIZE\r\nFLUSHALL\r\nDBSIZE\r\nFLUSHDB ASYNC\r\nFLUSHALL x\r\n",
    b"NOPE a b\r\nping a b\r\nINFO\r\nCOMMAND COUNT\r\nCONFIG GET save\r\nCLIENT SETNAME n\r\nCLIENT GETNAME\r\n",
    b"HELLO 2\r\nHELLO 3\r\nSELECT 0\r\nSELECT 1\r\nLPOP l -1\r\nLINDEX l x\r\nQUIT\r\nPING\r\n",
]
REPLIES = [b"+OK\r\n", b"-ERR x\r\n", b":-3\r\n", b"$-1\r\n", b"$2\r\nab\r\n", b"*2\r\n$1\r\na\r\n*-1\r\n",
           b"*0\r\n", b"+a\nb\r\n", b"$5\r\nab", b"?x\r\n", b"$2\r\nabc\r\n", b":01\r\n", b"*-2\r\n",
           b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n" + b"*1\r\n" * 40]


def write(target, seeds):
    d = os.path.join(HERE, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for s in seeds:
        name = hashlib.sha1(s).hexdigest()[:16]
        with open(os.path.join(d, name), "wb") as f:
            f.write(s)


def main():
    lines = [b"LIST\0rest", b"LIST\nrest", b"LIST\r\nrest", b"LIST\r\0", b"\n", b"", b"abcd", b"abcd\0",
             b"abcde", b"abc\r\n", b"POST@a#b\r\nLIST\0"]
    write("line_frame", [bytes([m]) + l for l in lines for m in (4, 64)] + [b"\xffLIST\0", b"\x00\n"])
    write("board_request", BOARD)
    write("board_reply", [b"@Solar system#@#@night_sky", b"", b"@", b"x", b"@a#b", b"0", b"007",
                          b"18446744073709551615", b"18446744073709551616", b"-1", b"night_sky\n\nSolar system"])
    write("echo_reply", [bytes([t]) + p for t in (0, 1) for p in (b"", b"abc\xff", b"LIST", b"\r")])
    blines = [b"5,10\n", b"5,10\r\n0,1\n", b"\n", b"5,10", b"", b"5,1\0", b"1234\r\n", b"1234\r", b"1234\n",
              b"12345", b"12345\n", b"12345\r\n", b"1234\rx", b"9" * 70 + b"\n"]
    write("bucket_frame", [bytes([m]) + l for l in blines for m in (4, 64)] + [b"\xff5,10\n"])
    write("bucket_request", BUCKET)
    write("bucket_reply", [bytes(8) + r for r in (b"42", b"42\r", b"ERR no", b"x", b"", b"-1",
                                                    b"ERR line over 64 bytes", b"18446744073709551616")]
          + [b"\xff" * 8 + b"18446744073709551615"])
    write("kv_head", [bytes([l, s]) + r for r in KV for (l, s) in ((0, 0), (1, 7))] + [b"\x00\x00" + b"\n" * 100])
    write("kv_target", [b"/apple", b"/a%20b%2Fc", b"/a+b", b"/a/b?x=1", b"/%ff%00", b"/_", b"/__/x", b"/_/health",
                        b"/_/stats?pretty", b"/%5F/stats", b"/_/", b"/", b"/?q", b"http://h:1/k", b"HTTP://h",
                        b"https://h?x", b"*", b"host:80", b"/a%2", b"/a%zz", b"/a#b", b"_/health", b"\xff\x00 /"])
    fields = [b"\x00x\n\x01 5\n\x03keep-alive",
              b"\x00x\n\x01 3\n\x02 3",
              b"\x00x\n\x01 3\n\x01 4",
              b"\x00x\n\x04chunked",
              b"\x00x\n\x06100-Continue\n\x01 1",
              b"\x00x\n\x06teapot",
              b"\x00a\n\x00b",
              b"\x05\"5d41402abc4b2a76b9719d911017c592\", W/\"x\"\n\x00x",
              b"\x03Upgrade, Close\n\x00x",
              b"\x01 99999999999999999999999\n\x00x",
              b"\x01 -1\n\x00x",
              b"\x07anything\n\x00x\n\x01 101"]
    write("kv_fields", [bytes([m, v]) + f for f in fields for (m, v) in ((2, 1), (0, 0))])
    write("kv_response", [bytes([m, st, fl]) + r for r in RESPONSES for (m, st, fl) in ((0, 0, 1), (1, 4, 40))])
    replies = [b"0\0", b"1\n42\nERR no\n", b"@a#@b\0TERMINATING\0", b"\0\0\n", b"partial", b"cba\0yx\nz"]
    write("load_line", [bytes([s]) + r for r in replies for s in (0, 9)])
    write("load_kv_reply", [bytes([m, s]) + r for r in RESPONSES for (m, s) in ((0, 0), (1, 5))])
    echo = [b"ab", b"c\0xy\nz", b"abcd\0", b"0123456789x", b"LIST\r\nEXIT\0", b"\r\n\r\0"]
    write("session_echo", [bytes([m, s]) + e for e in echo for (m, s) in ((3, 0), (1, 3))])
    board_streams = [b"\0".join(BOARD[:10]) + b"\0", b"\n".join(BOARD[10:]) + b"\n",
                     b"POST@t#a\0POST@t#b\nREAD@t#1\r\nCOUNT@t\0LIST\0EXIT\0LIST\0",
                     b"POST@x#" + b"m" * 80 + b"\0", b"POST@a#b"]
    write("session_board", [bytes([m, k, p, s]) + b for b in board_streams
                            for (m, k, p, s) in ((3, 0, 0, 0), (4, 3, 2, 5), (2, 1, 1, 9))])
    bucket_streams = [b"5,0\n0,0\n", b"0,1\r\n1,1\n0,1\n", b"1,9\n", b"61,0\n", b"x\n0,0\n",
                      b"1" * 70 + b"\n", b"0,0\n" * 5, b"1,0", b"1000,4\n0,4\n"]
    write("session_bucket", [bytes([l, d, c, n, k, s]) + b for b in bucket_streams
                             for (l, d, c, n, k, s) in ((3, 2, 0, 1, 0, 0), (2, 3, 1, 2, 2, 4))])
    kv_streams = [b"".join(KV[:3]), b"".join(KV[3:8]), KV[12] + KV[0], KV[13], KV[15] + KV[16] + KV[17],
                  KV[18], KV[22], KV[23], b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhel",
                  b"PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nvGET /k HTTP/1.1\r\nHost: x\r\n\r\n"
                  b"HEAD /k HTTP/1.1\r\nHost: x\r\n\r\nDELETE /k HTTP/1.1\r\nHost: x\r\n\r\n"]
    write("session_kv", [bytes([l, k, s]) + b for b in kv_streams for (l, k, s) in ((0, 0, 0), (1, 3, 6))])
    write("resp_frame", [bytes([i, b, a, s]) + r for r in RESP for (i, b, a, s) in ((255, 255, 255, 0), (4, 3, 2, 7))])
    write("resp_command", [b" " + c for c in (b"GET k", b"set k v nx", b"SET k v NX XX", b"SET k v PX 1", b"INCRBY k -9",
                                                b"DECRBY k -9223372036854775808", b"LPOP l 3", b"RPOP l -1", b"LRANGE l 0 -1",
                                                b"LINDEX l 01", b"MSET a 1 b", b"PING a b", b"FLUSHALL SYNC", b"SELECT 0",
                                                b"CLIENT SETNAME x", b"HELLO 2 SETNAME n", b"COMMAND DOCS", b"NOPE", b"",
                                                b"QUIT now", b"CONFIG GET *")] + [b"\n" + b"ECHO\na b\r\n"])
    write("resp_reply", [bytes([s]) + r for r in REPLIES for s in (0, 5)] + [b"\0" + b"".join(REPLIES[:7])])
    write("session_resp", [bytes([i, b, a, q, k, s]) + r for r in RESP
                           for (i, b, a, q, k, s) in ((5, 4, 5, 4, 0, 0), (2, 3, 4, 2, 1, 3), (3, 2, 3, 3, 3, 9))])


if __name__ == "__main__":
    main()
