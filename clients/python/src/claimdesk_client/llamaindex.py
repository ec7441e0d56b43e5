"""A LlamaIndex instrumentation event handler that posts each query's answer to ClaimDesk.

    from claimdesk_client.llamaindex import instrument
    handler = instrument(Client(url, token))   # on LlamaIndex's root dispatcher
    query_engine.query("How much is a senior fare?")
    handler.submissions[-1].wait(30).verdict

On every QueryEndEvent (a query engine's `query`/`aquery`) it posts the query, the response's
source nodes (what the retriever returned, after any postprocessor) and the response text, under
`external_id` = the query's span id. Streaming responses are not posted (their text is not known
when the query ends). Needs the `llamaindex` extra (llama-index-core).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]  # re-exported
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.core.schema import MetadataMode, QueryBundle
from pydantic import ConfigDict, Field

from claimdesk_client import _passages
from claimdesk_client.client import Client, Submission


class ClaimDeskEventHandler(BaseEventHandler):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client
    profile: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    submissions: list[Submission] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "ClaimDeskEventHandler"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if not isinstance(event, QueryEndEvent):
            return
        answer = getattr(event.response, "response", None)
        if not isinstance(answer, str) or not answer.strip():
            return
        query = event.query.query_str if isinstance(event.query, QueryBundle) else str(event.query)
        passages = _passages.unique(
            _passages.passage(hit.node.get_content(metadata_mode=MetadataMode.NONE), id=hit.node.node_id,
                              metadata=hit.node.metadata, score=hit.score)
            for hit in getattr(event.response, "source_nodes", None) or [])
        self.submissions.append(self.client.submit(answer, passages, question=query,
                                                   external_id=event.span_id or event.id_,
                                                   metadata=self.metadata or None, profile=self.profile))


def instrument(client: Client, *, profile: str | None = None, metadata: dict[str, Any] | None = None,
               dispatcher_name: str = "root") -> ClaimDeskEventHandler:
    """Add a ClaimDeskEventHandler to a LlamaIndex dispatcher (the root one by default)."""
    handler = ClaimDeskEventHandler(client=client, profile=profile, metadata=metadata or {})
    get_dispatcher(dispatcher_name).add_event_handler(handler)
    return handler
