"""The Redis transport (reviewapp/broker.py) reuses one Redis client per connection pool for its
synchronous commands instead of building one per publish; messages still arrive, in order."""

from __future__ import annotations

import uuid

import pytest
from kombu import Queue

from reviewapp import broker
from reviewapp.celery import app


@pytest.fixture
def channel():
    if not app.conf.broker_url.startswith("redis://"):
        pytest.skip("needs the Redis broker")
    with app.connection_for_write() as connection:
        yield connection.default_channel


def test_the_celery_app_publishes_through_our_transport(channel):
    assert isinstance(channel, broker.Channel)


def test_one_client_serves_every_publish_until_the_pool_changes(channel):
    first = channel._create_client()
    assert channel._create_client() is first
    channel._pool = None  # what a reconnect does
    assert channel._create_client() is not first


def test_published_messages_all_arrive_in_order(channel):
    queue = Queue(f"test-broker-{uuid.uuid4().hex}")(channel)
    queue.declare()
    try:
        producer = channel.connection.client.Producer(channel)
        for n in range(5):
            producer.publish({"n": n}, routing_key=queue.name)
        received = [queue.get(no_ack=True).payload["n"] for _ in range(5)]
        assert received == [0, 1, 2, 3, 4]
        assert queue.get(no_ack=True) is None
    finally:
        queue.delete()
