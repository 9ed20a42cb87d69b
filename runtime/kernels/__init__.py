"""Attention kernels whose wrappers errcat catalogues.

`sparse_mla` holds the validated sparse MLA FP8 prefill entry point and its `torch.library`
custom ops; `sparse_mla_reference` holds the PyTorch reference kernel they run. Importing this
package imports neither, so it costs nothing where torch is absent.
"""
