"""Reference sentence vectors for all-MiniLM-L6-v2, computed without the Rust code under test.

A float64 BERT forward pass in numpy over the model's safetensors, one sentence at a time (no padding), with
mean pooling and L2 normalisation as the model's sentence-transformers configuration says. Run once to refresh
reference_vectors.json:

    python reference.py MODEL_DIR > reference_vectors.json

Needs numpy, safetensors and tokenizers from PyPI.
"""
import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "The cat sits on the mat",
    "A kitten is resting on a rug",
    "Quarterly tax payments are due in April",
    "Remember to water the tomatoes before the trip.",
    "Été à Genève : café, crème brûlée et vélo.",
]


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def embed(weights, config, ids):
    w = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads = config["num_attention_heads"]
    size = config["hidden_size"] // heads
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        def dense(name, h):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q = dense("attention.self.query", x).reshape(n, heads, size).transpose(1, 0, 2)
        k = dense("attention.self.key", x).reshape(n, heads, size).transpose(1, 0, 2)
        v = dense("attention.self.value", x).reshape(n, heads, size).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores = scores / scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, heads * size)
        x = layer_norm(dense("attention.output.dense", context) + x,
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = gelu(dense("intermediate.dense", x))
        x = layer_norm(dense("output.dense", h) + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main(model_dir):
    weights = load_file(f"{model_dir}/model.safetensors")
    config = json.load(open(f"{model_dir}/config.json"))
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    out = []
    for sentence in SENTENCES:
        ids = tokenizer.encode(sentence).ids
        vector = embed(weights, config, ids)
        out.append({"text": sentence, "ids": ids, "vector": [round(float(v), 8) for v in vector]})
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
