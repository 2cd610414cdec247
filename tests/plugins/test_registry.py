"""Plugin registry: built-ins by name, third-party plugins through the entry-point group after a real
``pip install``, scene plugin code only when trusted, clear errors for unknown names and parameters."""
import subprocess
import sys
import textwrap

import pytest

from engine import plugins
from engine.errors import UniverseError
from engine.model.universe import PluginSpec
from engine.model.universe_xml import load_universe


def test_builtin_controllers_are_registered():
    assert {"pd", "gravity-compensation"} <= set(plugins.available("controller"))


def test_unknown_plugin_name_gives_a_hint():
    with pytest.raises(UniverseError, match=r"scene.xml:7: no controller plugin named 'pdd' \(did you mean 'pd'\?\)"):
        plugins.get("controller", "pdd", source="scene.xml:7")


def test_unknown_parameter_names_file_and_line():
    spec = PluginSpec("controller", "pd", {"kpp": "3"}, source="scene.xml:9")
    with pytest.raises(UniverseError, match=r"scene.xml:9: controller 'pd' has no parameter 'kpp' \(did you mean 'kp'\?\)"):
        plugins.create(spec, model=None, q0=None, gravity=None)


def test_entry_point_plugin_after_pip_install(tmp_path):
    pkg = tmp_path / "src"
    (pkg / "my_ctrl").mkdir(parents=True)
    (pkg / "my_ctrl" / "__init__.py").write_text(textwrap.dedent("""
        import numpy as np
        class Zero:
            kind = "controller"
            stage = "control"
            def __init__(self, model, gain=1.0):
                self.nv, self.gain = model.nv, gain
            def reset(self, q, v):
                pass
            def control(self, t, q, v):
                return np.zeros(self.nv)
        """))
    (pkg / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "my-ctrl"
        version = "0.1"
        [project.entry-points."articula.plugins"]
        zero-torque = "my_ctrl:Zero"
        """))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(pkg)], check=True, capture_output=True)
    probe = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(target)!r})
        from engine import plugins
        print(plugins.get("controller", "zero-torque").plugin_name)
        """)
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True,
                         cwd=str(plugins.__file__).rsplit("/engine/", 1)[0])
    assert out.stdout.strip() == "zero-torque"


def test_scene_plugin_code_needs_trust(tmp_path):
    code = tmp_path / "my_plugin.py"
    code.write_text(textwrap.dedent("""
        from engine.plugins import register
        @register("scene-test-controller")
        class C:
            kind = "controller"
            stage = "control"
        """))
    scene = tmp_path / "scene.xml"
    scene.write_text('<Universe>\n<PluginModule path="my_plugin.py"/>\n</Universe>\n')
    with pytest.raises(UniverseError, match="--trust-scene-plugins"):
        load_universe(scene)
    assert "scene-test-controller" not in plugins.available("controller")
    load_universe(scene, trust_plugins=True)
    assert "scene-test-controller" in plugins.available("controller")
