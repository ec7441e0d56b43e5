"""Sessions: a client's answers sharing a session_id are the turns of one conversation, in posting
order (selectors.py); each turn's judge also reads the passages earlier turns retrieved, and the
review page and /answers/?session= show the turns with their verdicts (views.py)."""
