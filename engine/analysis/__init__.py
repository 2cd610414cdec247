"""Analyses of a run: motion-capture markers against the model (``mocap``)."""
