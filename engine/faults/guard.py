"""The plugin boundary: every call into a plugin (controller, sensor, solver, device) goes through ``call``, and
every output it returns through ``checked_array`` / ``checked_signals``. A plugin that raises, returns a
non-finite value or the wrong shape becomes one ``PluginError`` naming the plugin, its kind and stage and the
offending value or shape; the simulation adds the multibody, the step and the time (``PluginError.at``)."""
from __future__ import annotations

import numpy as np

from engine.errors import PluginError
from engine.faults._kernels import first_non_finite


def plugin_name(plugin) -> str:
    """The name a plugin was registered under, else its class name."""
    return getattr(plugin, "plugin_name", None) or type(plugin).__name__


def call(plugin, kind: str, stage: str, method, *args, multibody: str | None = None):
    """``method(*args)``; any exception it raises becomes a ``PluginError`` (the original is its ``__cause__``)."""
    try:
        return method(*args)
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"raised {type(exc).__name__}: {exc}", plugin_name(plugin), kind, stage,
                          multibody) from exc


def checked_array(out, plugin, kind: str, stage: str, shape: tuple, what: str, multibody: str | None = None):
    """``out`` as a float array of ``shape`` with finite entries, else a ``PluginError`` naming the first bad
    entry (or the shape)."""
    array = out
    if type(out) is not np.ndarray or out.dtype != np.float64:
        try:
            array = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise PluginError(f"returned a {what} that is not an array of numbers", plugin_name(plugin), kind,
                              stage, multibody, value=repr(out)[:80]) from None
    if array.shape != shape:
        raise PluginError(f"returned a {what} of the wrong shape; expected {shape}", plugin_name(plugin), kind,
                          stage, multibody, shape=array.shape)
    bad = first_non_finite(array)
    if bad >= 0:
        raise PluginError(f"returned a non-finite {what} at index {bad}", plugin_name(plugin), kind, stage,
                          multibody, value=float(array.reshape(-1)[bad]))
    return array


def checked_signals(reading, sensor, multibody: str | None = None) -> dict:
    """A sensor's ``measure`` result: a dict of finite arrays, of the sizes its ``signals`` declare."""
    if not isinstance(reading, dict):
        raise PluginError("returned a reading that is not a dict of signals", plugin_name(sensor), "sensor",
                          "sense", multibody, value=type(reading).__name__)
    declared = getattr(sensor, "signals", {})
    checked = {}
    for name, value in reading.items():
        size = declared[name][1] if name in declared else np.size(value)
        checked[name] = checked_array(value, sensor, "sensor", "sense", (size,), f"signal '{name}'", multibody)
    return checked
