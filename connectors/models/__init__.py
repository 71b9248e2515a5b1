"""Model backends behind one interface (``base``): ``hf`` (transformers), ``vllm`` (in-process
engine, optional) and ``openai`` (any OpenAI-compatible endpoint), built from a spec string
(``spec``) by ``registry``, optionally behind the response cache (``cache``); ``batches`` turns
Arrow prompt batches into Arrow answer columns. Nothing here imports torch or vLLM until a
backend of that kind is built.
"""
