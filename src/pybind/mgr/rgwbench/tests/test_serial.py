"""serial's declared forms: what each metadata writes and reads."""
from dataclasses import dataclass, field
from typing import ClassVar, List, Optional, Tuple

from rgwbench.loadgen.histogram import Histogram
from rgwbench.serial import (HIDDEN, OMIT_DEFAULT, OMIT_EMPTY, derived, dump, form, load, of,
                             view)


@dataclass(frozen=True)
class Timed:
    name: str
    wait_s: float = field(default=1.0, metadata=form(
        key='wait', write=lambda s: int(s) if s == int(s) else s, read=float,
        older_keys=('wait_s',)))
    tries: int = field(default=0, metadata=form(absent=3))
    mode: str = field(default='plain', metadata=OMIT_DEFAULT)
    tags: Optional[List[str]] = field(default=None, metadata=OMIT_EMPTY)
    secret: Optional[str] = field(default=None, metadata=HIDDEN)
    shown: str = field(default='', metadata=derived(lambda t: t.shown.upper()))
    COMPUTED: ClassVar[Tuple[str, ...]] = ('label',)

    @property
    def label(self) -> str:
        return '%s/%s' % (self.name, self.mode)


def test_a_declared_form_writes_its_keys_in_field_order() -> None:
    timed = Timed('t', wait_s=2.5, tries=1, secret='s3cr3t', shown='yes')
    assert dump(timed) == {'name': 't', 'wait': 2.5, 'tries': 1, 'shown': 'YES',
                           'label': 't/plain'}
    assert list(dump(timed)) == ['name', 'wait', 'tries', 'shown', 'label']
    assert dump(Timed('t', wait_s=60.0))['wait'] == 60
    assert dump(Timed('t', mode='fast', tags=['a'])) == {
        'name': 't', 'wait': 1, 'tries': 0, 'mode': 'fast', 'tags': ['a'], 'shown': '',
        'label': 't/fast'}
    assert 'tags' not in dump(Timed('t', tags=[])) and 'tags' not in dump(Timed('t'))


def test_a_declared_form_reads_back_older_keys_and_absent_fields() -> None:
    assert load(Timed, {'name': 't', 'wait': 2.5, 'tries': 1}) == Timed('t', wait_s=2.5, tries=1)
    # a record older than `tries`, with the key `wait` had then
    read = load(Timed, {'name': 't', 'wait_s': 4})
    assert read == Timed('t', wait_s=4.0, tries=3) and isinstance(read.wait_s, float)
    # neither a hidden field nor a computed key is read
    assert load(Timed, {'name': 't', 'secret': 'x', 'label': 'y', 'tries': 0}) == Timed('t')
    assert load(Timed, {'name': 't', 'wait': None, 'tries': 0}) == Timed('t')


@dataclass(frozen=True)
class Summary:
    name: str
    first: Optional[str] = field(metadata=of(lambda t: t.tags[0] if t.tags else None))


def test_a_view_takes_same_named_attributes_and_its_own_makers() -> None:
    assert view(Summary, Timed('t', tags=['a', 'b'])) == Summary('t', 'a')
    assert dump(view(Summary, Timed('t'))) == {'name': 't', 'first': None}


@dataclass
class Timings:
    latency: Optional[Histogram] = None
    spares: List[Histogram] = field(default_factory=list)


def test_a_class_with_its_own_json_form_is_read_and_written_through_it() -> None:
    hist = Histogram()
    hist.record_many([5, 300, 2000000])
    doc = {'latency': hist.to_dict(), 'spares': [Histogram().to_dict()]}
    read = load(Timings, doc)
    assert isinstance(read.latency, Histogram) and read.latency == hist
    assert read.spares == [Histogram()]
    assert dump(read) == doc
    # a document the class refuses is left out, as any value of the wrong shape
    refused = load(Timings, {'latency': {'v': 99, 'b': []}, 'spares': [[1, 2], doc['latency']]})
    assert refused.latency is None and refused.spares == [hist]
