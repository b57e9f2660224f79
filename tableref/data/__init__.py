"""Bundled sample data."""

from importlib import resources
from pathlib import Path


def sample_state_path() -> Path:
    """The bundled sample table state (the seed melee of Clone Troopers and Battle Droids, with some trouble): what
    ``tableref check`` checks and the dashboard serves when given nothing else."""
    return Path(str(resources.files(__name__).joinpath("sample_state.json")))
