"""German and English time expressions: the parser the timeline agent reads appointments
with, and the time windows a memory search narrows to ("letzten Sommer", "im März")."""
