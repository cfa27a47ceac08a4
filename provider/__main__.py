"""The component package's entry point: Pulumi's Python language host runs `python provider
<engine address>` for `pulumi package add`, `pulumi preview` and `pulumi up` of programs in other
languages, and this serves the public components from the installed gke-ai-batch package."""
from gke_ai_batch.provider import serve

if __name__ == "__main__":
    serve()
