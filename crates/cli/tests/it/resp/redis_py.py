"""Every command serverlab's RESP server serves, through redis-py, with its
reply asserted. Run by crates/cli/tests/it/resp_interop.rs against a server
on the port given: `python3 redis_py.py PORT`. Exits non-zero on the first
reply that differs."""

import sys

import redis

port = int(sys.argv[1])
# RESP2: serverlab serves protocol 2. redis-py 5 and later take
# `protocol` (and 8 asks for 3 unless told); Debian 12's 4.3 speaks only 2.
resp2 = {"protocol": 2} if int(redis.__version__.split(".")[0]) >= 5 else {}
r = redis.Redis(host="127.0.0.1", port=port, client_name="interop", **resp2)


def eq(got, want, what):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


eq(r.ping(), True, "PING")
eq(r.echo("hello"), b"hello", "ECHO")
eq(r.client_getname(), "interop", "CLIENT GETNAME after client_name")
eq(r.client_setname("py"), True, "CLIENT SETNAME")
eq(r.client_getname(), "py", "CLIENT GETNAME")
eq(r.flushall(), True, "FLUSHALL")
eq(r.flushdb(), True, "FLUSHDB")
eq(r.dbsize(), 0, "DBSIZE empty")
eq(r.get("k"), None, "GET missing")
eq(r.set("k", b"v\x00\r\n"), True, "SET")
eq(r.get("k"), b"v\x00\r\n", "GET binary-safe")
eq(r.set("k", "x", nx=True), None, "SET NX existing")
eq(r.set("k", "x", xx=True), True, "SET XX existing")
eq(r.set("new", "x", xx=True), None, "SET XX missing")
eq(r.exists("k", "k", "new"), 2, "EXISTS counts repeats")
eq(r.incr("n"), 1, "INCR")
eq(r.incrby("n", 41), 42, "INCRBY")
eq(r.decr("n"), 41, "DECR")
eq(r.decrby("n", 1), 40, "DECRBY")
try:
    r.incr("k")
    sys.exit("INCR of a non-integer did not fail")
except redis.ResponseError as e:
    eq(str(e), "value is not an integer or out of range", "INCR error")
eq(r.mset({"a": "1", "b": "2"}), True, "MSET")
eq(r.mget("a", "nope", "b"), [b"1", None, b"2"], "MGET")
eq(r.delete("a", "b", "nope"), 2, "DEL")
eq(r.rpush("l", "a", "b", "c"), 3, "RPUSH")
eq(r.lpush("l", "z"), 4, "LPUSH")
eq(r.llen("l"), 4, "LLEN")
eq(r.lindex("l", -1), b"c", "LINDEX negative")
eq(r.lindex("l", 9), None, "LINDEX out of range")
eq(r.lrange("l", 0, -1), [b"z", b"a", b"b", b"c"], "LRANGE")
eq(r.lrange("l", 1, 2), [b"a", b"b"], "LRANGE middle")
eq(r.lpop("l"), b"z", "LPOP")
eq(r.rpop("l"), b"c", "RPOP")
eq(r.lpop("l", 5), [b"a", b"b"], "LPOP count")
eq(r.lpop("l"), None, "LPOP empty")
eq(r.exists("l"), 0, "a list popped empty is gone")
r.rpush("l", "x")
try:
    r.get("l")
    sys.exit("GET of a list did not fail")
except redis.ResponseError as e:
    eq(str(e), "WRONGTYPE Operation against a key holding the wrong kind of value", "WRONGTYPE")
eq(r.dbsize(), 3, "DBSIZE")
info = r.info()
for k in ["redis_version", "connected_clients", "total_commands_processed", "db0"]:
    if k not in info:
        sys.exit(f"INFO lacks {k}: {info}")
eq(info["db0"]["keys"], 3, "INFO keyspace")
eq(r.info("keyspace"), {"db0": {"keys": 3, "expires": 0, "avg_ttl": 0}}, "INFO keyspace section")
eq(r.config_get("save"), {"save": ""}, "CONFIG GET save")
eq(r.config_get("appendonly"), {"appendonly": "no"}, "CONFIG GET appendonly")
eq(r.config_get("nosuch*"), {}, "CONFIG GET unknown")
eq(r.command_count(), len(r.command()), "COMMAND COUNT")
eq(r.select(0), True, "SELECT 0")
# Beyond the fast path: a transaction, a deadline, a blocking pop's
# timeout, a set, as redis-py sends them.
pipe = r.pipeline(transaction=True)
pipe.incr("t")
pipe.incr("t")
eq(pipe.execute(), [1, 2], "MULTI/EXEC")
eq(r.set("e", "v", ex=100), True, "SET EX")
if not 90 <= r.ttl("e") <= 100:
    sys.exit(f"TTL after SET EX 100: {r.ttl('e')}")
eq(r.blpop(["nolist"], timeout=0.1), None, "BLPOP times out")
eq(r.sadd("s", "a", "b"), 2, "SADD")
eq(r.smembers("s"), {b"a", b"b"}, "SMEMBERS")
try:
    r.execute_command("NOSUCH", "a")
    sys.exit("an unknown command did not fail")
except redis.ResponseError as e:
    eq(str(e), "unknown command 'NOSUCH', with args beginning with: 'a' ", "unknown command")
try:
    r.execute_command("GET")
    sys.exit("GET without a key did not fail")
except redis.ResponseError as e:
    eq(str(e), "wrong number of arguments for 'get' command", "arity")
pipe = r.pipeline(transaction=False)
for i in range(100):
    pipe.set(f"p{i}", i)
    pipe.get(f"p{i}")
res = pipe.execute()
eq(res, [x for i in range(100) for x in (True, str(i).encode())], "pipeline")
eq(r.ping(), True, "still talking")
print("redis-py: every command answered as expected")
