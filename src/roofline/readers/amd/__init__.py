"""AMD Instinct profiles: the vendor wing beside :mod:`roofline.readers.ncu`.

- :mod:`roofline.readers.amd.omniperf`: Omniperf 1.x/2.x and rocprof-compute 3.x workload folders
  (``pmc_perf.csv``, ``sysinfo.csv``, ``timestamps.csv``, ``pmc_dispatch_info.csv``; ``roofline.csv`` as
  a measured machine);
- :mod:`roofline.readers.amd.rocprof_outputs`: rocprofv3 output folders and files (the long
  ``counter_collection.csv`` pivoted and its passes merged: :mod:`~roofline.readers.amd.rocprofv3`;
  JSON, rocpd SQLite and rocprof v1's ``results.csv``: :mod:`~roofline.readers.amd.rocprof_files`);
- :mod:`roofline.readers.amd.dispatches`: the kernel table of AMD dispatches, counted with the AMD formula
  table (:mod:`roofline.counting.amd`), whichever tool wrote them.

The GPU's name (``MI300X``, ``AMD Instinct MI210``) rides in the table's ``metrics`` as
:data:`DEVICE_NAME_COLUMN`, where :func:`roofline.machine.resolve.gpus` finds it.
"""

#: The column of :attr:`roofline.kernels.KernelTable.metrics` that names an AMD dispatch's GPU.
DEVICE_NAME_COLUMN = "device_name"
