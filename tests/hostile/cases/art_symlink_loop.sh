# Directory loops through symlinks and deep nesting: the artifact walk neither loops nor follows them.
# expect: outcome=exited exit_code=0
# check: [a["name"] for a in r["artifacts"]] == ["a/file"] and r["wall_ms"] < 3000
# within: 6
cd /workspace
mkdir -p a
ln -s ../a a/loop
ln -s loop2 loop1
ln -s loop1 loop2
ln -s . self
ln -s /workspace a/abs
echo f > a/file
