"""`manage.py import_golden FILE.jsonl [--name NAME] [--gold]`: a labelled set to measure the judge
on, and with --gold to score reviewers on (reviewapp.quality.golden)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from judges.eval import DatasetError
from reviewapp.labels.golden import golden_import
from reviewapp.quality.golden import gold_from_golden


class Command(BaseCommand):
    help = (
        "Store a golden set (one labelled record per line, ../shared/data/README.md's format) as"
        " answers with their human labels, for `manage.py evaluate --golden NAME`. Re-importing"
        " skips records already stored; invalid lines are reported with their line number and never"
        " stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE.jsonl")
        parser.add_argument(
            "--name",
            default="",
            help="the golden set's name (default: the file name without .jsonl)",
        )
        parser.add_argument(
            "--gold",
            action="store_true",
            help="also mark its records gold: handed to reviewers among live answers and "
            "scored (the judge in force judges each first, to have claims to label)",
        )

    def handle(self, *args, file: str, name: str, gold: bool = False, **options):
        name = name or Path(file).name.removesuffix(".jsonl")
        try:
            result = golden_import(path=file, name=name)
        except DatasetError as exc:
            raise CommandError(str(exc)) from None
        for item in result.skipped:
            self.stderr.write(f"line {item.line} ({item.id or 'no id'}): {item.reason}")
        self.stdout.write(
            f"golden set {name!r}: {result.created} imported, {result.existing} already there, "
            f"{len(result.skipped)} invalid (not imported)"
        )
        if gold:
            marked = gold_from_golden(name=name)
            for record_id, why in marked.skipped:
                self.stderr.write(f"{record_id}: not gold: {why}")
            self.stdout.write(f"gold: {marked.marked} marked, {len(marked.skipped)} skipped")
