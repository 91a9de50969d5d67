# 60 artifacts of 15000 bytes each: every one small enough to inline, together far over the 64 KiB packet. The result must still arrive, complete (60 artifacts, none lost silently).
# expect: outcome=exited exit_code=0
# check: len(r["artifacts"]) == 60 and all(a["size"] == 15000 and not a["truncated"] for a in r["artifacts"])
# args: --limit artifacts=60
# within: 10
for i in range(60):
    with open("/workspace/a%02d" % i, "wb") as f:
        f.write(bytes([65 + i % 26]) * 15000)
