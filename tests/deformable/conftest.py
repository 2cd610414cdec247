"""Every test of engine.deformable writes its FEM cache under its own tmp_path."""
import pytest


@pytest.fixture(autouse=True)
def fem_cache(tmp_path, monkeypatch):
    """The cache directory of this test (empty at start): $ARTICULA_CACHE_DIR/fem."""
    monkeypatch.setenv("ARTICULA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "fem"
