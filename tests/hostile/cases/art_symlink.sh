# Symlinks in the workspace to host-ish files (/etc/passwd, /proc/1/environ, /) never become artifacts.
# expect: outcome=exited exit_code=0
# check: [a["name"] for a in r["artifacts"]] == ["real.txt"]
# args: --artifacts @ART@/symlink
# after: sorted(os.listdir(ctx.dir + "/art/symlink")) == ["real.txt"] and not os.path.islink(ctx.dir + "/art/symlink/real.txt")
cd /workspace
ln -s /etc/passwd passwd
ln -s /proc/1/environ environ
ln -s / root
ln -s @CONFIG@ config
ln -s ../../../../../etc/shadow up
echo real > real.txt
