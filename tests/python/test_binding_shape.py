"""Tests of the Python binding that need libairlock but no daemon.

Run by meson (suite "python") with AIRLOCK_LIBRARY (the built libairlock.so)
and PYTHONPATH (libclient/python) set:

- the binding's limit numbers and names (_lib.LIMIT_*, _types._LIMIT_FIELDS)
  agree with airlock_limit_name() for every value, through ctypes on the built
  library: a limit added to or renumbered in the C library without the binding
  fails here;
- the run methods keep their public signatures (names, kinds, defaults,
  annotations) and refuse an unknown keyword with TypeError, whatever
  machinery builds them.
"""

import asyncio
import ctypes
import inspect
import os
import unittest

import airlock
from airlock import _lib, _types


def _field_to_limit_name(field: str, scale: int) -> str:
    """The library's name a SandboxLimits field stands for: "max_" dropped,
    seconds (scale 1000) counted in ms."""
    name = field[len("max_") :] if field.startswith("max_") else field
    if scale == 1000:
        assert name.endswith("_seconds"), field
        name = name[: -len("_seconds")] + "_ms"
    return name


class LimitNamesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.lib = _lib.load_library(os.environ.get("AIRLOCK_LIBRARY"))

    def library_names(self):
        """airlock_limit_name(v) for v = 0, 1, ... until it answers NULL."""
        names = []
        while True:
            name = self.lib.airlock_limit_name(len(names))
            if name is None:
                return names
            names.append(name.decode())

    def test_every_value_has_the_library_name(self) -> None:
        names = self.library_names()
        self.assertGreater(len(names), 0)
        constants = {k[len("LIMIT_") :].lower(): v for k, v in vars(_lib).items() if k.startswith("LIMIT_")}
        fields = {limit: (field, scale) for field, (limit, scale) in _types._LIMIT_FIELDS.items()}
        self.assertEqual(len(fields), len(_types._LIMIT_FIELDS), "two SandboxLimits fields share a limit")
        for value, name in enumerate(names):
            with self.subTest(value=value, name=name):
                self.assertEqual(constants.get(name), value, f"_lib.LIMIT_{name.upper()}")
                self.assertIn(value, fields, "no SandboxLimits field")
                self.assertEqual(_field_to_limit_name(*fields[value]), name)
        self.assertEqual(sorted(constants.values()), list(range(len(names))), "_lib has a limit the library has not")
        self.assertEqual(sorted(fields), list(range(len(names))), "_types has a limit the library has not")

    def test_from_name_round_trip(self) -> None:
        for value, name in enumerate(self.library_names()):
            out = ctypes.c_int(-1)
            self.assertEqual(self.lib.airlock_limit_from_name(name.encode(), ctypes.byref(out)), 0, name)
            self.assertEqual(out.value, value, name)


_COMMON = (
    "code: 'Union[str, bytes]', *, language: 'str' = 'python', limits: 'Optional[SandboxLimits]' = None, "
    "files: 'Optional[Mapping[str, BytesLike]]' = None, env: 'Optional[Mapping[str, str]]' = None, "
    "args: 'Optional[Sequence[str]]' = None, stdin: 'Optional[BytesLike]' = None, "
)
_TAIL = (
    "tools: 'Optional[Mapping[str, Callable[..., Any]]]' = None, "
    "approve: 'Optional[ApproveHook]' = None, timeout: 'Optional[float]' = None, "
    "figures: 'str' = 'png') -> 'SandboxResult'"
)
_MOUNTS = "mounts: 'Optional[Sequence[str]]' = None, "
_ASYNC_OUT = "on_output: 'Optional[OutputCallback]' = None, "
_SYNC_OUT = "on_output: 'Optional[Callable[[str, bytes], None]]' = None, "


class RunSignatureTest(unittest.TestCase):
    """The signatures as they were before run()'s keywords had one definition
    (_RunArgs), and figures= (a python run's figures as SVG, issue 30) since."""

    def test_signatures(self) -> None:
        expect = [
            (airlock.AirlockSandbox.run, True, "(self, " + _COMMON + _MOUNTS + _ASYNC_OUT + _TAIL),
            (airlock.AirlockSandbox.run_sync, False, "(self, " + _COMMON + _MOUNTS + _SYNC_OUT + _TAIL),
            (airlock.AirlockSession.run, True, "(self, " + _COMMON + _ASYNC_OUT + _TAIL),
            (airlock.AirlockSessionSync.run, False, "(self, " + _COMMON + _SYNC_OUT + _TAIL),
        ]
        for fn, is_async, text in expect:
            with self.subTest(fn.__qualname__):
                self.assertEqual(str(inspect.signature(fn)), text)
                self.assertEqual(inspect.iscoroutinefunction(fn), is_async)
                self.assertTrue(fn.__doc__)

    def test_bad_keywords(self) -> None:
        sandbox = airlock.AirlockSandbox("/nonexistent/airlock.sock")
        self.addCleanup(sandbox.close)
        with self.assertRaises(TypeError):
            sandbox.run_sync("1", bogus=1)
        with self.assertRaises(TypeError):
            sandbox.run_sync("1", "python")  # keywords only
        with self.assertRaises(TypeError):
            sandbox.run_sync()
        with self.assertRaises(TypeError):
            asyncio.run(sandbox.run("1", bogus=1))
        session = sandbox.session_sync()
        with self.assertRaises(TypeError):
            session.run("1", mounts=["x"])  # a session's runs take no mounts
        with self.assertRaises(TypeError):
            asyncio.run(sandbox.session().run("1", mounts=["x"]))


if __name__ == "__main__":
    unittest.main()
