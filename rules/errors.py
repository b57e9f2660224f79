"""Named errors of the rules module: each says what was wrong and what was expected."""


class RulesError(ValueError):
    """Base of every error the rules module raises on bad input."""


class StateError(RulesError):
    """A table state that cannot be used: the message names the offending entry."""


class ProfileError(RulesError):
    """A rule profile that cannot be used: unknown name, bad TOML, missing or wrong field."""


class ActionError(RulesError):
    """Declared actions that cannot be used: an unknown action name, or an entry of the wrong shape."""


class MeleeError(RulesError):
    """A melee that cannot be placed: an unknown unit, a unit with no leader, or a leader not in base contact with
    exactly one enemy unit."""
