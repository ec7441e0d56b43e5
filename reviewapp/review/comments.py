"""An answer's comment thread: reviewers and leads write to it; every comment is also an
AuditEvent."""

from __future__ import annotations

from django.db import transaction

from reviewapp.models import Answer, AnswerComment
from reviewapp.audit import audit_record

COMMENTED = "answer.commented"


def comment_add(*, user, answer: Answer, body: str) -> AnswerComment:
    """Append `body` (a CommentForm's clean value: stripped, not empty, within BODY_MAX) to the
    answer's thread, with its audit row. The text itself is kept once, in the comment."""
    with transaction.atomic():
        comment = AnswerComment.objects.create(answer=answer, author=user, body=body)
        audit_record(actor=user, actor_label=user.get_username(), action=COMMENTED, obj=answer,
                     after={"comment": comment.pk, "characters": len(body)})
    return comment
