from django import template

register = template.Library()


@register.filter
def pct(value) -> str:
    """A share (0..1) as a percentage; a dash when it could not be measured."""
    return "—" if value is None else f"{value:.1%}"


@register.filter
def num(value, places: int = 2) -> str:
    return "—" if value is None else f"{value:.{places}f}"


@register.filter
def measure(value, metric: str) -> str:
    """Kappa as a number, every other calibration figure (a share) as a percentage."""
    return num(value) if metric == "kappa" else pct(value)
