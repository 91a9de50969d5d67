/* Fixture of size-check-negative: tests/ is measured too (issue 31's
 * review); test_too_long is 12 lines and the file 26, over 10 and 20. */
int test_too_long(int x);

int
test_too_long(int x)
{
	x += 1;
	x *= 2;
	x -= 3;
	x += 4;
	x *= 5;
	x -= 6;
	x += 7;
	x *= 8;
	return x;
}

/* padding below, so that the file is over 20 lines */
int test_short(int x);

int
test_short(int x)
{
	return x;
}
