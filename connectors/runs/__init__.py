"""Run bookkeeping in one place: run directories and their locks (``rundir``), per-item tables
(``tables``, ``records``), the run store of finished and failed runs (``store``), reading finished
runs back (``finished``) and the code version recorded with each (``code_graph``)."""
