"""The runtime whose errors errcat catalogues.

Components: the Torch<->MLX tensor bridge (`tensor_bridge`), the MLX runtime validator
(`mlx_runtime`), the multimodal feature transport memory pool (`transport`) and the sparse MLA
FP8 prefill wrappers (`kernels.sparse_mla`). Importing this package imports none of them, and
never imports mlx.
"""
