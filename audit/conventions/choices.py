"""The item fields the conventions audit can scan, as data (no imports): the command line checks
``--fields`` without loading the detectors."""

FIELDS = ("question", "passage", "instructions", "options", "gold")
