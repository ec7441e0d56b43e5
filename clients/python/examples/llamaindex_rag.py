"""A LlamaIndex query engine (MockLLM with a scripted reply, in-memory retriever) whose queries
are posted to ClaimDesk.

    pip install 'claimdesk-client[llamaindex]'
    CLAIMDESK_URL=http://127.0.0.1:8000 CLAIMDESK_TOKEN=... python llamaindex_rag.py
"""

from llama_index.core.llms import CompletionResponse, MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, TextNode

from claimdesk_client import Client
from claimdesk_client.llamaindex import instrument


class FareRetriever(BaseRetriever):
    def _retrieve(self, query_bundle):
        return [NodeWithScore(node=TextNode(text="Riders aged 65 and older pay a reduced fare of $1.00 per ride.",
                                            id_="fares-4.2", metadata={"title": "Fare Policy"}), score=0.9)]


class ScriptedLLM(MockLLM):
    @llm_completion_callback()
    def complete(self, prompt, formatted=False, **kwargs):
        return CompletionResponse(text="Seniors pay $1.00 per ride, and rides are free on Sundays.")


with Client() as claimdesk:
    handler = instrument(claimdesk)
    print(RetrieverQueryEngine.from_args(FareRetriever(), llm=ScriptedLLM()).query("What does a senior pay?"))
    result = handler.submissions[-1].wait(30)
    print(result.external_id, result.verdict, [(c.label, c.text) for c in result.claims])
    print("safe answer:", repr(result.safe_answer))
