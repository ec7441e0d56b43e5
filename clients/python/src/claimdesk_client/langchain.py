"""A LangChain callback handler that posts each RAG chain's answer to ClaimDesk when it ends.

    from claimdesk_client.langchain import ClaimDeskCallbackHandler
    handler = ClaimDeskCallbackHandler(Client(url, token))
    chain.invoke(question, config={"callbacks": [handler]})
    handler.submissions[-1].wait(30).verdict

For each top-level chain run in which a retriever ran, it posts the question (from the chain's
input, else the retriever's query), the documents every retriever returned, and the last LLM
output (else the chain's own output), under `external_id` = the chain's run id. Needs the
`langchain` extra (langchain-core).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.outputs import LLMResult

from claimdesk_client import _passages
from claimdesk_client.client import Client, Submission

log = logging.getLogger(__name__)
_QUESTION_KEYS = ("question", "query", "input", "q")
_OUTPUT_KEYS = ("answer", "output", "result", "text")


@dataclass
class _Trace:
    question: str
    retrieved: bool = False
    documents: list[Document] = field(default_factory=list)
    output: str = ""


def _text(value: Any, keys: Sequence[str]) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return next((value[k] for k in keys if isinstance(value.get(k), str)), "")
    return ""


class ClaimDeskCallbackHandler(BaseCallbackHandler):
    """Posts a chain's retrieval and answer to ClaimDesk when the chain ends (see the module)."""

    def __init__(self, client: Client, *, profile: str | None = None, metadata: Mapping[str, Any] | None = None):
        self.client, self.profile, self.metadata = client, profile, dict(metadata or {})
        self.submissions: list[Submission] = []
        self._roots: dict[UUID, UUID] = {}  # every live run -> its top-level chain run
        self._traces: dict[UUID, _Trace] = {}
        self._lock = threading.Lock()  # async chains call handlers from several threads

    def _trace(self, run_id: UUID, parent_run_id: UUID | None) -> _Trace | None:
        """The trace of the top-level chain this run belongs to, or None outside any."""
        with self._lock:
            root = self._roots.get(run_id) or (self._roots.get(parent_run_id) if parent_run_id else None)
            if root is None:
                return None
            self._roots[run_id] = root
            return self._traces.get(root)

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        # A chain whose parent this handler did not see is top-level for it: the handler may
        # have been given to an inner chain only (`.with_config(callbacks=[handler])`).
        if self._trace(run_id, parent_run_id) is None:
            with self._lock:
                self._roots[run_id] = run_id
                self._traces[run_id] = _Trace(question=_text(inputs, _QUESTION_KEYS))

    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        trace = self._trace(run_id, parent_run_id)
        if trace is not None:
            trace.retrieved = True
            trace.question = trace.question or query

    def on_retriever_end(self, documents: Sequence[Document], *, run_id: UUID, parent_run_id: UUID | None = None,
                         **kwargs: Any) -> None:
        trace = self._trace(run_id, parent_run_id)
        if trace is not None:
            trace.documents.extend(documents)

    def on_llm_start(self, serialized: dict[str, Any] | None, prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._trace(run_id, parent_run_id)

    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: list[list[Any]], *, run_id: UUID,
                            parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._trace(run_id, parent_run_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None,
                   **kwargs: Any) -> None:
        trace = self._trace(run_id, parent_run_id)
        if trace is not None and response.generations and response.generations[-1]:
            trace.output = response.generations[-1][-1].text

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        trace = self._finish(run_id)
        if trace is None or not trace.retrieved:
            return  # not a RAG run: nothing to judge against
        answer = trace.output or _text(outputs, _OUTPUT_KEYS)
        if not answer.strip():
            return
        passages = _passages.unique(
            _passages.passage(doc.page_content, id=doc.id or doc.metadata.get("id"), metadata=doc.metadata)
            for doc in trace.documents)
        self.submissions.append(self.client.submit(answer, passages, question=trace.question,
                                                   external_id=str(run_id), metadata=self.metadata or None,
                                                   profile=self.profile))

    def on_chain_error(self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None,
                       **kwargs: Any) -> None:
        self._finish(run_id)

    def _finish(self, run_id: UUID) -> _Trace | None:
        """Forget a top-level run and its children, returning its trace; None for any other run."""
        with self._lock:
            if self._roots.get(run_id) != run_id:
                return None
            for run in [run for run, root in self._roots.items() if root == run_id]:
                del self._roots[run]
            return self._traces.pop(run_id, None)
