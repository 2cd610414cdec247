"""The dock panels of the main window: scene tree, inspector, plots, timing, log."""
