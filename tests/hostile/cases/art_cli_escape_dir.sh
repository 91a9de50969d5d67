# The CLI's --artifacts DIR: a pre-existing symlink in DIR must not be followed when writing artifacts.
# expect: outcome=exited
# args: --artifacts @ART@/pre
# before: os.makedirs(ctx.dir + "/art/pre", exist_ok=True); os.symlink(ctx.dir, ctx.dir + "/art/pre/link")
# after: not os.path.exists(ctx.dir + "/pwned-by-artifact")
mkdir -p /workspace/link
echo owned > /workspace/link/pwned-by-artifact
