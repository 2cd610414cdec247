"""Helpers of the GUI tests."""
import time


def wait(qapp, condition, timeout=120.0):     # generous: numba caches may be rebuilt on a busy machine
    """Process Qt events until ``condition()`` holds; fail after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not met in time"
        qapp.processEvents()
        time.sleep(0.005)


def settle(qapp, window):
    """Process events until the physics thread's newest frame has been drawn."""
    window.physics.submit(lambda sim: None).result(30)
    wait(qapp, lambda: window.physics.latest.get()[0] == window._version)
