"""test_options.py -- keyword options, the Options object, shared Cache and
WriteController objects, properties, maintenance calls and versions."""
import re

import pytest

import ravel


def options_in_force(db):
    text = db.property("ravel.options")
    return dict(line.split("=", 1) for line in text.splitlines()
                if "=" in line)


def test_keyword_options_are_converted(path):
    with ravel.open(path, create_if_missing=True, write_buffer_size="1M",
                    block_restart_interval=8, verify_checksums=False,
                    bloom_bits_per_key=0) as db:
        opts = options_in_force(db)
    assert opts["verify_checksums"] in ("false", "0")
    assert opts["block_restart_interval"] == "8"
    assert opts["bloom_bits_per_key"] == "0"


def test_options_object(path):
    o = ravel.Options(create_if_missing=True)
    o["block_size"] = "8K"
    o.set("bloom_bits_per_key", 12)
    o.parse("max_open_files=100; verify_checksums=true")
    assert o["block_size"] in ("8K", "8192")
    assert o["max_open_files"] == "100"
    assert o["write_buffer_size"]           # defaults can be read too
    with pytest.raises(ravel.InvalidArgumentError):
        o["no_such_option"] = 1
    with pytest.raises(ravel.InvalidArgumentError):
        o["no_such_option"]
    with pytest.raises(ravel.InvalidArgumentError):
        o.parse("block_size=1;bogus=2")
    # all or nothing: the good item before the bad one is not applied
    with pytest.raises(ravel.InvalidArgumentError, match="bogus"):
        o.parse("max_open_files=200;bogus=2")
    assert o["max_open_files"] == "100"
    with pytest.raises(TypeError):
        o["block_size"] = [1]
    with ravel.open(path, o, block_restart_interval=4) as db:
        opts = options_in_force(db)
    assert opts["max_open_files"] == "100"
    assert opts["block_restart_interval"] == "4"
    with ravel.open(path, options=o) as db:
        assert options_in_force(db)["bloom_bits_per_key"] == "12"
    with pytest.raises(TypeError):
        ravel.open(path, o, options=o)
    with pytest.raises(TypeError):
        ravel.open(path, options={"create_if_missing": True})
    assert "block_size" in repr(o)


def test_shared_cache_and_write_controller(tmp_path):
    cache = ravel.Cache(1 << 20)
    wc = ravel.WriteController(16 << 20)
    assert cache.capacity == 1 << 20
    assert wc.delayed_write_rate == 16 << 20
    o = ravel.Options(create_if_missing=True)
    o.cache = cache
    o.write_controller = wc
    assert o.cache is cache and o.write_controller is wc
    a = ravel.open(str(tmp_path / "a"), o)
    b = ravel.open(str(tmp_path / "b"), create_if_missing=True, cache=cache,
                   write_controller=wc)
    del cache, wc, o                # the databases keep their references
    for d in (a, b):
        for i in range(500):
            d[b"k%04d" % i] = b"v" * 200
        d.flush()
        assert sum(1 for _ in d.items()) == 500
    usage_a = int(a.property("ravel.block-cache-usage"))
    usage_b = int(b.property("ravel.block-cache-usage"))
    assert usage_a > 0 and usage_a == usage_b    # one cache
    a.close()
    b.close()


def test_cache_and_controller_arguments():
    assert ravel.Cache(0).usage == 0
    with pytest.raises(ravel.InvalidArgumentError):
        ravel.WriteController(1)    # below 1024
    with pytest.raises(OverflowError):
        ravel.Cache(-1)
    with pytest.raises(TypeError):
        ravel.open("x", cache="big")
    o = ravel.Options()
    with pytest.raises(TypeError):
        o.cache = 5
    o.cache = None
    assert o.cache is None


def test_properties(db):
    db[b"a"] = b"1"
    assert int(db.property("ravel.last-sequence")) >= 1
    assert db.property("ravel.stats")
    assert db.property("ravel.wal-io").split()[0] in ("sync", "uring",
                                                      "direct")
    assert db.property("ravel.num-files-at-level0") == "0"
    db.flush()
    assert db.property("ravel.num-files-at-level0") == "1"


def test_maintenance_calls(db):
    for i in range(100):
        db[b"k%03d" % i] = b"v"
    db.flush_wal()
    db.flush_wal(sync=True)
    db.flush(wait=False)
    db.flush()
    db.compact_range(b"k010", b"k050")
    db.compact_range(start=b"k000")
    db.compact_range(stop=b"k099")
    db.compact_range()
    db.verify()
    assert db[b"k050"] == b"v"
    with pytest.raises(TypeError):
        db.compact_range("k0")


def test_versions():
    assert re.fullmatch(r"\d+\.\d+\.\d+", ravel.__version__)
    assert ravel.lib_version == ravel.header_version
    major, minor, patch = map(int, ravel.lib_version.split("."))
    assert ravel.lib_version_number == major * 1000000 + minor * 1000 + patch


def test_repr(path):
    db = ravel.open(path, create_if_missing=True)
    assert path in repr(db)
    assert db.path == path
    db.close()
    assert "closed" in repr(db)
