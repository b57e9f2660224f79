"""Named errors of the scene renderer."""


class SceneError(ValueError):
    """A scene that cannot be rendered: the message says what was wrong and what was expected."""
