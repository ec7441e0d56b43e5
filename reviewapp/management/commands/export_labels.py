"""`manage.py export_labels --format jsonl|csv|golden|ragtruth [--since DATE] [--profile
NAME@VERSION] [--out FILE]`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviewapp.labels.exports import FORMATS, BadFilter, parse_filters, write_export
from reviewapp.labels.export_audit import export_audit


class Command(BaseCommand):
    help = (
        "Stream decided claims (one row each) as JSONL or CSV, or adjudicated answers as golden-set"
        " JSONL, from one database snapshot. With --out, FILE.manifest.json is written beside FILE."
    )
    # The system checks load every URL module (the MCP server's SDK among them): ~1 CPU-second of
    # start-up, as long as a 50,000-row export takes. An export reads rows; it checks no deployment.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument(
            "--since", default="", metavar="DATE", help="decided on or after this day (UTC)"
        )
        parser.add_argument(
            "--profile", default="", metavar="NAME[@VERSION]", help="claims from this judge profile"
        )
        parser.add_argument(
            "--out",
            default="",
            metavar="FILE",
            help="default: stdout (the manifest goes to stderr)",
        )

    def handle(self, *args, format: str, since: str, profile: str, out: str, **options):
        try:
            filters = parse_filters(since=since, profile=profile)
        except BadFilter as exc:
            raise CommandError(str(exc)) from None
        if not out:
            manifest = write_export(sys.stdout.buffer, fmt=format, filters=filters)
            sys.stdout.buffer.flush()
            self.stderr.write(json.dumps(manifest, indent=2))
        else:
            manifest = self._to_file(Path(out), format, filters)
        export_audit(actor=None, actor_label="cli:export_labels", fmt=format,
                     details={k: v for k, v in manifest.items() if k != "created_at"})

    def _to_file(self, path: Path, fmt: str, filters) -> dict:
        # Written beside, then renamed: a failed export never leaves a file that looks complete.
        partial = path.with_name(path.name + ".part")
        try:
            with open(partial, "wb") as handle:
                manifest = write_export(handle, fmt=fmt, filters=filters)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, path)
        manifest["file"] = path.name
        path.with_name(path.name + ".manifest.json").write_text(
            json.dumps(manifest, indent=2) + "\n"
        )
        self.stderr.write(f"{manifest['rows']} rows -> {path} (sha256 {manifest['sha256']})")
        return manifest
