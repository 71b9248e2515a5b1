"""``benchaudit docs`` options, declared once (flags are generated)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from audit.docs.choices import CRITERIA
from jobs.common.cli.config import Flag, JobConfig

DOCS = "documentation"


class DocsConfig(JobConfig):
    """Everything that decides a docs run's results."""

    cards: Annotated[list[str], Flag(DOCS, metavar="PATH", repeat=True, default_text="required")] = Field(
        min_length=1, description="documentation files, folders (searched for .md, .json, .jsonld), globs or URLs; repeatable")
    reviews: Annotated[list[str], Flag(DOCS, metavar="CSV", repeat=True)] = Field(
        default_factory=list, description="reviewer sheet(s): resource, annotator, one 0/1/2 column per criterion [, notes]; "
                                          "one row per resource and annotator; repeatable")
    criteria: Annotated[list[str], Flag(DOCS, metavar="CRITERION[,CRITERION...]")] = Field(
        default_factory=lambda: list(CRITERIA), description="subset of the criteria to score")
    limit: Annotated[int | None, Flag(DOCS, metavar="N", default_text="all")] = Field(
        None, ge=1, description="score only the first N documents (a smoke test; recorded in the manifest)")

    @model_validator(mode="after")
    def _known(self) -> DocsConfig:
        unknown = sorted(set(self.criteria) - set(CRITERIA))
        if unknown or not self.criteria:
            raise ValueError(f"--criteria: unknown or no criteria {unknown}; known: {list(CRITERIA)}")
        return self
