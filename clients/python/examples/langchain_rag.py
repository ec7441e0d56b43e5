"""A LangChain RAG chain (fake LLM, in-memory retriever) whose runs are posted to ClaimDesk.

    pip install 'claimdesk-client[langchain]'
    CLAIMDESK_URL=http://127.0.0.1:8000 CLAIMDESK_TOKEN=... python langchain_rag.py
"""

from langchain_core.documents import Document
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough

from claimdesk_client import Client
from claimdesk_client.langchain import ClaimDeskCallbackHandler


class FareRetriever(BaseRetriever):
    def _get_relevant_documents(self, query, *, run_manager):
        return [Document("Riders aged 65 and older pay a reduced fare of $1.00 per ride.", id="fares-4.2",
                         metadata={"title": "Fare Policy", "source": "https://example.org/fares"})]


llm = FakeListLLM(responses=["Seniors pay $1.00 per ride, and rides are free on Sundays."])
prompt = PromptTemplate.from_template("Passages:\n{context}\n\nQuestion: {question}\nAnswer:")
context = FareRetriever() | (lambda docs: "\n\n".join(doc.page_content for doc in docs))
chain = {"context": context, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()

with Client() as claimdesk:
    handler = ClaimDeskCallbackHandler(claimdesk)
    print(chain.invoke("What does a senior pay?", config={"callbacks": [handler]}))
    result = handler.submissions[-1].wait(30)
    print(result.external_id, result.verdict, [(c.label, c.text) for c in result.claims])
    print("safe answer:", repr(result.safe_answer))
