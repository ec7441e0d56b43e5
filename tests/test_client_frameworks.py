"""The LangChain callback handler and the LlamaIndex event handler (clients/python) with the
frameworks' own fakes (langchain_core's FakeListLLM and BaseRetriever, llama-index-core's MockLLM
and BaseRetriever), posting to the live app, judged by a real celery worker.

Nothing may leave the machine: every test runs with connections to anything but loopback
refused, and the frameworks are first imported inside the tests, under that guard, so an import
or a run that fetched tokenizer encodings or nltk data would fail here."""

from __future__ import annotations

import ipaddress
import json
import socket
import uuid

import httpx
import pytest

from claimdesk_client import Client, PollPolicy
from tests.conftest import run_coroutine
from tests.factories import fare_payload

QUESTION = "How much is a senior fare, and a 30-day pass?"
# "... $1.00 per ride. A 30-day pass costs $75.00." (P2 says $92.00)
ANSWER = fare_payload()["answer"]
SENIOR, PASS = (p["text"] for p in fare_payload()["passages"])


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    connect = socket.socket.connect

    def guarded(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0]
            try:
                allowed = ipaddress.ip_address(host.split("%")[0]).is_loopback
            except ValueError:
                allowed = host == "localhost"
            if not allowed:
                raise OSError(
                    f"test forbids a connection to {address!r}: nothing may be fetched at run time"
                )
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def claimdesk(live_server, api_token, celery_worker):
    with Client(live_server.url, api_token, poll=PollPolicy(first=0.05, longest=0.3)) as client:
        yield client


def _posted(external_id: str):
    from reviewapp.models import Answer

    answer = Answer.objects.get(external_id=external_id)
    return answer.question, [(p.pid, p.text) for p in answer.passages.order_by("position")]


def _scores(external_id: str):
    from reviewapp.models import Answer

    return [
        p.score for p in Answer.objects.get(external_id=external_id).passages.order_by("position")
    ]


def _fare_chain(llm_reply: str = ANSWER):
    from langchain_core.documents import Document
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import PromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough

    class FareRetriever(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            # a reranker's score
            return [
                Document(
                    SENIOR,
                    id="fare-policy-4.2",
                    metadata={"title": "Fare Policy", "source": "https://example.org/fares"},
                ),
                Document(PASS, metadata={"id": "doc-17#3", "relevance_score": 0.62}),
            ]

    prompt = PromptTemplate.from_template("Passages:\n{context}\n\nQuestion: {question}\nAnswer:")
    context = FareRetriever() | (lambda docs: "\n\n".join(doc.page_content for doc in docs))
    return (
        {"context": context, "question": RunnablePassthrough()}
        | prompt
        | FakeListLLM(responses=[llm_reply])
        | StrOutputParser()
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_the_langchain_handler_posts_a_chains_retrieval_and_output_and_it_is_judged(claimdesk):
    from claimdesk_client.langchain import ClaimDeskCallbackHandler

    handler = ClaimDeskCallbackHandler(claimdesk)
    run_id = uuid.uuid4()
    output = _fare_chain().invoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})

    assert output == ANSWER and len(handler.submissions) == 1
    result = handler.submissions[0].wait(timeout=30)
    assert result.external_id == str(run_id)
    assert [c.label for c in result.claims] == ["SUPPORTED", "CONTRADICTED"]
    assert result.claims[0].evidence[0].passage_id == "fare-policy-4.2"
    assert result.safe_answer == "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
    assert _posted(str(run_id)) == (QUESTION, [("fare-policy-4.2", SENIOR), ("doc-17#3", PASS)])
    assert _scores(str(run_id)) == [None, 0.62]


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_the_langchain_handler_posts_an_async_chain_too(claimdesk):
    from claimdesk_client.langchain import ClaimDeskCallbackHandler

    handler = ClaimDeskCallbackHandler(claimdesk, metadata={"app": "fares-bot"})
    run_id = uuid.uuid4()
    run_coroutine(
        _fare_chain().ainvoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    )

    assert len(handler.submissions) == 1
    assert handler.submissions[0].wait(timeout=30).verdict in ("MOSTLY_GROUNDED", "UNGROUNDED")
    assert _posted(str(run_id))[0] == QUESTION


def test_a_chain_without_a_retriever_posts_nothing():
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_core.prompts import PromptTemplate

    from claimdesk_client.langchain import ClaimDeskCallbackHandler

    sent = []
    client = Client("http://claimdesk.test", "token", transport=httpx.MockTransport(sent.append))
    handler = ClaimDeskCallbackHandler(client)
    chain = PromptTemplate.from_template("Say hello to {name}") | FakeListLLM(responses=["Hello!"])
    assert chain.invoke({"name": "Ada"}, config={"callbacks": [handler]}) == "Hello!"
    assert sent == [] and handler.submissions == []


@pytest.fixture
def llama_handler(claimdesk):
    from llama_index.core.instrumentation import get_dispatcher

    from claimdesk_client.llamaindex import instrument

    handler = instrument(claimdesk)
    yield handler
    get_dispatcher().event_handlers.remove(handler)


def _fare_query_engine():
    from llama_index.core.llms import CompletionResponse, MockLLM
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    class FareRetriever(BaseRetriever):
        def _retrieve(self, query_bundle):
            return [
                NodeWithScore(
                    node=TextNode(
                        text=SENIOR, id_="fare-policy-4.2", metadata={"title": "Fare Policy"}
                    ),
                    score=0.91,
                ),
                NodeWithScore(node=TextNode(text=PASS, id_="fare-policy-7.1"), score=0.62),
            ]

    class FareLLM(MockLLM):
        """MockLLM, answering as a RAG model would instead of echoing its prompt."""

        @llm_completion_callback()
        def complete(self, prompt, formatted=False, **kwargs):
            return CompletionResponse(text=ANSWER)

    return RetrieverQueryEngine.from_args(FareRetriever(), llm=FareLLM())


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_the_llamaindex_handler_posts_a_querys_source_nodes_and_response_and_it_is_judged(
    llama_handler,
):
    response = _fare_query_engine().query(QUESTION)

    assert str(response) == ANSWER and len(llama_handler.submissions) == 1
    result = llama_handler.submissions[0].wait(timeout=30)
    assert result.external_id.startswith("RetrieverQueryEngine.query-")
    assert [c.label for c in result.claims] == ["SUPPORTED", "CONTRADICTED"]
    assert result.claims[1].evidence[0].passage_id == "fare-policy-7.1"
    assert _posted(result.external_id) == (
        QUESTION,
        [("fare-policy-4.2", SENIOR), ("fare-policy-7.1", PASS)],
    )
    assert _scores(result.external_id) == [0.91, 0.62]  # the nodes' scores


def test_a_handler_given_to_an_inner_chain_only_posts_that_chains_run():
    from langchain_core.runnables import RunnableLambda

    from claimdesk_client.langchain import ClaimDeskCallbackHandler

    posted = []

    def accept(request: httpx.Request) -> httpx.Response:
        posted.append(json.loads(request.content))
        return httpx.Response(
            202, json={"id": "opaque-1", "status": "queued", "url": "http://claimdesk.test/x"}
        )

    handler = ClaimDeskCallbackHandler(
        Client("http://claimdesk.test", "token", transport=httpx.MockTransport(accept))
    )
    outer = RunnableLambda(lambda question: question) | _fare_chain().with_config(
        callbacks=[handler]
    )
    assert outer.invoke(QUESTION) == ANSWER

    assert [s.id for s in handler.submissions] == ["opaque-1"]
    (payload,) = posted
    assert (payload["question"], payload["answer"]) == (QUESTION, ANSWER)
    assert payload["passages"] == [
        {
            "id": "fare-policy-4.2",
            "text": SENIOR,
            "title": "Fare Policy",
            "source_url": "https://example.org/fares",
            "metadata": {"title": "Fare Policy", "source": "https://example.org/fares"},
        },
        {
            "id": "doc-17#3",
            "text": PASS,
            "score": 0.62,
            "metadata": {"id": "doc-17#3", "relevance_score": 0.62},
        },
    ]
    assert uuid.UUID(payload["external_id"])  # the inner chain's run id


def test_documents_become_passages_with_the_ids_the_server_takes_and_storable_metadata():
    from datetime import date

    from claimdesk_client import _passages
    from judges.types import passage_id_problem

    for pid in ("doc-17#3", 'a b"c', "x" * 100, "x" * 101, " padded", "two\nlines", "a>>>b", ""):
        kept = "id" in _passages.passage("t", id=pid, metadata={})
        assert kept == (passage_id_problem(pid) is None), pid  # the client's rule is the server's
    found = _passages.passage(
        "t",
        id="n1",
        metadata={"day": date(2026, 1, 2), "nan": float("nan"), "page": 4, "score": float("inf")},
        score=0.5,
    )
    assert (found["score"], found["metadata"]) == (0.5, {"page": 4})
    assert "score" not in _passages.passage("t", id=None, metadata={"score": "high"})
