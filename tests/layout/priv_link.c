/*
 * priv_link.c: the main() of priv-link, which links the privileged
 * libraries whole (tests/layout/meson.build): if any of their objects calls
 * a function outside the privileged set, the link names the missing symbol.
 */
int main(void);

int
main(void)
{
	return 0;
}
