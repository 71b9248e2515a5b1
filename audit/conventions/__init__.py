"""conventions."""
