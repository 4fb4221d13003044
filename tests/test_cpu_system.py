"""System description (sysfs caches) and theoretical CPU ceilings, on fake inputs with known answers."""

from __future__ import annotations

import pytest

from roofline.errors import MachineError
from roofline.machine.cpu_host import CacheLevel, CpuDescription, parse_cpu_list, parse_size, read_caches
from roofline.machine.cpu_theory import theoretical_cpu


def make_sysfs(root, cpus, caches):
    """caches: [(level, type, size, shared_cpu_list_for_cpu_fn)]"""
    for cpu in cpus:
        for i, (level, kind, size, shared) in enumerate(caches):
            d = root / f"cpu{cpu}" / "cache" / f"index{i}"
            d.mkdir(parents=True)
            (d / "level").write_text(f"{level}\n")
            (d / "type").write_text(f"{kind}\n")
            (d / "size").write_text(f"{size}\n")
            (d / "shared_cpu_list").write_text(shared(cpu) + "\n")


def test_parse_helpers():
    assert parse_size("32K") == 32768 and parse_size("1024K") == 2**20 and parse_size("32M") == 2**25
    assert parse_size("512") == 512
    assert parse_cpu_list("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}


def test_read_caches_counts_private_and_shared_instances(tmp_path):
    # 4 CPUs, 2 cores with SMT siblings (0,1) (2,3): private L1/L2 per core, one shared L3.
    core = lambda c: "0-1" if c < 2 else "2-3"  # noqa: E731
    make_sysfs(tmp_path, range(4), [
        (1, "Data", "48K", core), (1, "Instruction", "32K", core),
        (2, "Unified", "2048K", core), (3, "Unified", "36M", lambda c: "0-3"),
    ])
    caches = read_caches([0, 1, 2, 3], root=tmp_path)
    assert caches == (CacheLevel(1, 48 * 1024, 2), CacheLevel(2, 2 * 2**20, 2), CacheLevel(3, 36 * 2**20, 1))
    assert [c.total for c in caches] == [96 * 1024, 4 * 2**20, 36 * 2**20]
    only_first = read_caches([0], root=tmp_path)
    assert [c.instances for c in only_first] == [1, 1, 1]


def cpu(flags, vendor="GenuineIntel", model="Intel Xeon Gold 6148", cores=20, clock=2.4e9):
    return CpuDescription(model=model, vendor=vendor, cpus=tuple(range(cores)), clock_hz=clock,
                          flags=frozenset(flags), physical_cores=cores)


def test_skylake_avx512_peak():
    # Xeon Gold 6148: 20 cores x 2.4 GHz x 8 lanes x 2 FMA units x 2 = 1536 GFLOP/s FP64
    m = theoretical_cpu(cpu({"avx512f", "avx2", "fma", "sse2"}), clock_hz=2.4e9)
    assert m.source == "theoretical"
    assert m.compute["fp64"] == pytest.approx(1536e9)
    assert m.compute["fp32"] == pytest.approx(3072e9)
    assert m.metadata["assumed"]["fma_units_per_core"] == 2
    assert "clock_hz" in m.metadata["read"]
    assert m.memory == {}


def test_avx2_and_one_fma_unit_given():
    m = theoretical_cpu(cpu({"avx2", "avx", "fma"}, cores=8, clock=3e9), fma_units=1, clock_hz=3e9)
    assert m.compute["fp64"] == pytest.approx(8 * 3e9 * 4 * 1 * 2)
    assert "fma_units_per_core" not in m.metadata["assumed"]


def test_zen4_runs_avx512_on_256_bit_units(monkeypatch):
    import roofline.machine.cpu_theory as th

    monkeypatch.setattr(th, "_amd_family", lambda c: 25)
    m = theoretical_cpu(cpu({"avx512f", "avx2", "fma"}, vendor="AuthenticAMD", model="AMD EPYC", cores=2,
                            clock=2.6e9), clock_hz=2.6e9)
    assert m.compute["fp64"] == pytest.approx(2 * 2.6e9 * 4 * 2 * 2)
    assert "datapath_bits" in m.metadata["assumed"]


def test_no_fma_sse2_and_unknown_flags():
    m = theoretical_cpu(cpu({"sse2"}, cores=1, clock=2e9), clock_hz=2e9)
    assert m.compute["fp64"] == pytest.approx(1 * 2e9 * 2 * 2)  # one add + one mul per lane per cycle
    with pytest.raises(MachineError, match="vector width"):
        theoretical_cpu(cpu(set()), clock_hz=1e9)


def test_theoretical_on_this_machine_is_plausible():
    m = theoretical_cpu()
    assert m.compute["fp64"] > 1e9
    assert set(m.metadata) >= {"read", "assumed", "formula"}


# The CI's 2-core AMD EPYC (Zen 4) VM: /proc/cpuinfo advertises 2.6 GHz and no cpufreq folder exists,
# while its cores run at about 3.65 GHz; quick runs measure 114-117 GFLOP/s FP64 (issue 32).
def epyc_vm():
    return cpu({"avx512f", "avx2", "fma"}, vendor="AuthenticAMD", model="AMD EPYC", cores=2, clock=2.596142e9)


@pytest.fixture
def zen4(monkeypatch):
    import roofline.machine.cpu_theory as th

    monkeypatch.setattr(th, "_amd_family", lambda c: 25)
    return th


def test_the_advertised_clock_gives_a_floor_said_as_such(zen4, monkeypatch):
    monkeypatch.setattr(zen4, "_max_clock_hz", lambda cpus: None)  # no cpufreq in a VM
    m = theoretical_cpu(epyc_vm())
    assert m.compute["fp64"] == pytest.approx(2 * 2.596142e9 * 4 * 2 * 2)  # 83.1 GFLOP/s
    assert m.name == "AMD EPYC (2 cores, theoretical floor)"
    assert m.metadata["floor"].startswith("a floor, not a ceiling: at the advertised 2.6 GHz clock, which turbo can exceed")
    assert m.metadata["clock_hz"] == {"fp64": 2.596142e9, "fp32": 2.596142e9}


def test_a_measured_clock_gives_ceilings(zen4):
    m = theoretical_cpu(epyc_vm(), clock_hz=3.65e9, clock_source="measured: dependent adds timed beside the FMA kernels")
    assert m.compute["fp64"] == pytest.approx(2 * 3.65e9 * 4 * 2 * 2)  # 116.8 GFLOP/s: not below the 116 measured
    assert m.name == "AMD EPYC (2 cores, theoretical)" and "floor" not in m.metadata
    assert m.metadata["read"]["clock_hz"] == "3.65e+09 (measured: dependent adds timed beside the FMA kernels)"


def test_cpufreq_maximum_is_a_floor_only_under_acpi_cpufreq(zen4, monkeypatch):
    monkeypatch.setattr(zen4, "_max_clock_hz", lambda cpus: (3.7e9, "amd-pstate-epp"))  # boost included
    m = theoretical_cpu(epyc_vm())
    assert m.compute["fp64"] == pytest.approx(2 * 3.7e9 * 16) and "floor" not in m.metadata
    assert m.metadata["read"]["clock_hz"] == "3.7e+09 (cpufreq cpuinfo_max_freq, amd-pstate-epp)"
    monkeypatch.setattr(zen4, "_max_clock_hz", lambda cpus: (2.6e9, "acpi-cpufreq"))  # nominal, boost excluded
    assert "acpi-cpufreq driver gives without boost" in theoretical_cpu(epyc_vm()).metadata["floor"]


def test_the_ceilings_table_marks_a_floor(zen4, monkeypatch):
    from rich.console import Console

    from roofline.views.machine_table import ceilings_table
    from roofline.machine.model import Machine

    monkeypatch.setattr(zen4, "_max_clock_hz", lambda cpus: None)
    measured = Machine(name="AMD EPYC (2 threads)", source="measured", memory={"dram": 5.5e10},
                       compute={"fp64": 1.1477e11, "fp32": 2.0928e11})  # benchmarks/results/cpu_vm_default.json
    console = Console(record=True, width=200)
    console.print(ceilings_table(measured, theoretical_cpu(epyc_vm())))
    text = console.export_text()
    assert "≥ 83.1 GFLOP/s" in text and "≥ 166 GFLOP/s" in text and "138.1%" in text
