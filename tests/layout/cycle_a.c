/*
 * cycle_a.c: one of five files calling each other in a circle (a -> b ->
 * c -> d -> e -> a), the library cycle-check-negative reads: a component
 * of 5 files, over the limit of 4.
 */
int cycle_a(int n);
int cycle_b(int n);

int
cycle_a(int n)
{
	return n > 0 ? cycle_b(n - 1) : 0;
}
