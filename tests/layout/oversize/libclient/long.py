"""Fixture of size-check-negative: too_long_py is 12 lines, listed at 11."""


def too_long_py(x):
    y = x
    y += 1
    y *= 2
    y -= 3
    y //= 4
    y += 5
    y *= 6
    y -= 7
    y += 8
    y *= 9
    return y
