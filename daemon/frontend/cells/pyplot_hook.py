# pyplot_hook.py: the import hook on matplotlib.pyplot that the cells driver
# (cells.py) and a python run's start-up (runboot.py) share; the build puts
# this file in front of each (daemon/frontend/meson.build). Standard library
# only, nothing imported: what a run that never imports pyplot pays is this
# class's definition and one call per import.


class _PyplotFinder:
    """Imports matplotlib.pyplot as usual, then calls loaded(module)."""

    def __init__(self, loaded):
        self.loaded = loaded

    def find_spec(self, name, path, target=None):
        if name != "matplotlib.pyplot":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real, loaded = spec.loader.exec_module, self.loaded

        def exec_module(module):
            real(module)
            loaded(module)

        spec.loader.exec_module = exec_module
        return spec
