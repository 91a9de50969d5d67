# A FIFO (and a unix socket) in the workspace neither blocks the artifact walk nor becomes an artifact.
# expect: outcome=exited exit_code=0
# check: [a["name"] for a in r["artifacts"]] == ["z.txt"] and r["wall_ms"] < 3000
# within: 5
cd /workspace
mkfifo fifo
python3 -I -S -c 'import socket; socket.socket(socket.AF_UNIX).bind("/workspace/sock")' 2>/dev/null
echo z > z.txt
