# Offline plan and check need no cloud, no credentials and no Pulumi CLI.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STACK ?= dev
OUT ?=
STACKS := $(patsubst stacks/Pulumi.%.yaml,%,$(wildcard stacks/Pulumi.*.yaml))
out_flag = $(if $(OUT),--out $(OUT))

WORKLOAD ?= examples/workloads

.DEFAULT_GOAL := help
# Every target with a `##` comment, as `make <target> <its arguments>: what it does`.
help:  ## this list
	@awk -F':.*## ' '/^[a-z0-9-]+:.*## /{c=$$2; sub("^make "$$1" ?","",c); printf "make %s%s%s\n", $$1, (c ~ /^[A-Z[]/ ? " " : ": "), c}' $(MAKEFILE_LIST)

.PHONY: help setup plan check diff report admit admit-all access sandbox sandbox-stop why e2e test lint reuse provider conform check-all golden docs package-schema schema bench lock clean

PLANNING := $(VENV)/.planning
TOOLS := $(VENV)/.tools

# What planning needs (the offline plan, check, diff and admit): requirements.txt, the install `pulumi up` runs
# (this package, editable, and its dependencies), with pip's progress shown.
$(PLANNING): requirements.txt pyproject.toml
	@echo "setting up $(VENV) for planning: pulumi, pulumi-gcp, pulumi-kubernetes, pulumi-policy, pydantic, PyYAML, cel-python"
	@echo "  (about 450 MB on disk, 300 MB of it pulumi-gcp; half a minute with a warm download cache, more without)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install --disable-pip-version-check --progress-bar on -r requirements.txt
	@touch $@

# The rest, for tests, lint and `make conform`: requirements-dev.txt.
$(TOOLS): $(PLANNING) requirements-dev.txt
	@echo "adding the test and lint tools to $(VENV): pytest, ruff, mypy, build, and make conform's"
	@echo "  jsonschema and kubernetes-validate, and the observability and report tests' clients (about 300 MB more)"
	@$(VENV)/bin/pip install --disable-pip-version-check --progress-bar on -r requirements-dev.txt
	@touch $@

setup: $(TOOLS)  ## everything: planning, tests and lint

plan: $(PLANNING)  ## make plan STACK=<name|path> [OUT=dir]: the offline plan, its summary and out/<stack>/
	$(PY) -m gke_ai_batch.offline plan $(STACK) $(out_flag)

check: $(PLANNING)  ## make check STACK=<name|path> [OUT=dir] [POLICY_CONFIG=file.json]: the plan and every policy; exit 1 on a mandatory violation
	$(PY) -m gke_ai_batch.offline check $(STACK) $(out_flag) $(if $(POLICY_CONFIG),--policy-config $(POLICY_CONFIG))

# BASE: the git ref `make diff` compares with; origin/main if this clone has it, else main.
BASE ?= $(shell git rev-parse --verify --quiet origin/main >/dev/null && echo origin/main || echo main)
diff: $(PLANNING)  ## make diff STACK=<name|path> [BASE=<git ref>] [FROM=<its name at BASE>]: what the change since BASE would do to the stack, like a preview
	$(PY) -m gke_ai_batch.offline.diff $(STACK) $(BASE) $(if $(FROM),--renamed-from $(FROM))

report: $(PLANNING)  ## make report STACK=<name|path> [BASE=<git ref>]: out/<stack>/report.html, the plan as one page (with BASE: quotas before and after)
	$(PY) -m gke_ai_batch.offline.report $(STACK) $(if $(filter command line,$(origin BASE)),--base $(BASE)) $(out_flag)

# WORKLOAD's default (every sample) is left out when DELETE is given and WORKLOAD is not.
admit_workload = $(if $(and $(DELETE),$(filter file,$(origin WORKLOAD))),,$(WORKLOAD))
admit: $(PLANNING)  ## make admit STACK=<name|path> WORKLOAD=<file or folder> [OLD=<file> [SCALE=1]] [DELETE=<file> [PROPAGATION=Orphan|Background|Foreground|none|orphanDependents] [GRACE=<seconds>]]: would Kueue admit each workload (OLD: the objects as they are, so those in both are updates; SCALE: through /scale; DELETE: objects a member deletes first, as kubectl delete sends it unless PROPAGATION or GRACE, its --grace-period, says)?
	$(PY) -m gke_ai_batch.offline.admit $(STACK) $(admit_workload) $(if $(OLD),--old $(OLD)) $(if $(SCALE),--scale) \
	  $(if $(DELETE),--delete $(DELETE)) $(if $(PROPAGATION),--propagation $(PROPAGATION)) \
	  $(if $(GRACE),--grace-period $(GRACE))

admit-all: $(PLANNING)  ## every sample workload against the stack it is named after
	@for f in examples/workloads/*.yaml; do s=$$(basename $$f .yaml); $(PY) -m gke_ai_batch.offline.admit $$s $$f || exit 1; done

# CHECK: one question, "VERB RESOURCE NAMESPACE": RESOURCE plural[.group][/subresource], NAMESPACE * for cluster scope.
access: $(PLANNING)  ## make access STACK=<name|path> TEAM=<team> [CHECK="VERB RESOURCE NAMESPACE"]: what the team's groups may do (RBAC)
	$(PY) -m gke_ai_batch.offline.access $(STACK) $(TEAM) $(if $(CHECK),--check "$(CHECK)")

# The sandbox: a real control plane (etcd, kube-apiserver, kube-controller-manager), Kueue and JobSet on 127.0.0.1,
# built from their Go modules (sandbox/modules) once per machine, with the stack's Kubernetes layer deployed by pulumi up.
sandbox: $(PLANNING)  ## make sandbox STACK=<name>: start the sandbox of the stack and deploy its Kubernetes layer (docs/e2e.md; needs Go)
	$(PY) -m gke_ai_batch.sandbox up $(STACK)

sandbox-stop: $(PLANNING)  ## stop every process the sandbox started
	$(PY) -m gke_ai_batch.sandbox stop

why: $(PLANNING)  ## make why STACK=<name> JOB=<namespace>/<job>: why the job is pending in the running sandbox (docs/why-pending.md)
	$(PY) -m gke_ai_batch.why --kubeconfig .sandbox/admin.kubeconfig --kubectl $(HOME)/.cache/gke-ai-batch/sandbox/bin/kubectl why $(JOB)

e2e: $(PLANNING)  ## make e2e STACK=<name>: in a sandbox, hold every offline verdict (admit, access) to the real API server and Kueue
	$(PY) -m gke_ai_batch.sandbox e2e $(STACK)

# One worker per core (at most 4: each holds its own plans, 526 MB at most measured) and a test file per worker, so a
# file's module-scoped plans and `make diff` runs are made once (pytest-xdist's loadfile).
test: setup  ## the test suite, its files spread over the cores
	$(PY) -m pytest -n auto --maxprocesses 4 --dist loadfile

TYPECHECK := build/typecheck
lint: setup  ## ruff over the repository, mypy --strict over the package (through a link tree of its installed layout)
	$(VENV)/bin/ruff check .
	@rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/gke_ai_batch
	@for f in gke_ai_batch/*; do ln -s "$$PWD/$$f" $(TYPECHECK)/gke_ai_batch/; done
	@ln -s "$$PWD/components" "$$PWD/policies" $(TYPECHECK)/gke_ai_batch/
	cd $(TYPECHECK) && $(CURDIR)/$(VENV)/bin/mypy --config-file $(CURDIR)/pyproject.toml -p gke_ai_batch

LOCK := build/lock
lock:  ## rewrite requirements.lock: pyproject.toml's dependencies resolved on PyPI, every file hashed (what CI's previews install)
	rm -rf $(LOCK) && $(PYTHON) -m venv $(LOCK) && $(LOCK)/bin/pip install -q --disable-pip-version-check pip-tools
	$(LOCK)/bin/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url \
	  --no-emit-find-links --pip-args "--isolated --index-url https://pypi.org/simple" \
	  --output-file requirements.lock pyproject.toml

REUSE := build/reuse
reuse: setup  ## build the sdist and wheel, install the wheel in a fresh virtualenv, and plan and check examples/reuse with it
	rm -rf $(REUSE) && $(PY) -m build --outdir $(REUSE)/dist . > /dev/null  # the sdist, and the wheel built from it
	$(PYTHON) -m venv $(REUSE)/venv
	$(REUSE)/venv/bin/pip install -q --disable-pip-version-check $(REUSE)/dist/*.whl
	cd examples/reuse && $(CURDIR)/$(REUSE)/venv/bin/python -m gke_ai_batch.offline check dev | tail -n 1
	@# the same program with a misspelt argument: one error line, exit 2
	cp -r examples/reuse $(REUSE)/misspelt && rm -rf $(REUSE)/misspelt/out
	sed 's/"capacity": "spot"/"capacty": "spot"/' examples/reuse/__main__.py > $(REUSE)/misspelt/__main__.py
	cd $(REUSE)/misspelt && { $(CURDIR)/$(REUSE)/venv/bin/python -m gke_ai_batch.offline plan dev 2>&1; test $$? -eq 2; }
	$(REUSE)/venv/bin/python -c "import importlib.resources as r; r.files('gke_ai_batch').joinpath('schema.json').read_text()"
	@# the installed command, outside the checkout: a reference without a namespace is one error line, exit 2
	cd $(REUSE) && { venv/bin/gke-ai-batch why train-llm 2>&1 | grep -x "error: 'train-llm': name the job as <namespace>/<job>, for example research/train-llm"; }

PROVIDER ?= provider
provider: setup  ## build the package's wheel into provider/ (PROVIDER=dir), beside PulumiPlugin.yaml: its requirements.txt installs it, so the folder works outside this checkout
	rm -f $(PROVIDER)/gke_ai_batch-*.whl
	$(PY) -m build --wheel --outdir $(PROVIDER) . > /dev/null
	@ls $(PROVIDER)/gke_ai_batch-*.whl

conform: setup  ## render every stack and check all manifests and the sample workloads against the vendored upstream schemas
	@for s in $(STACKS); do $(PY) -m gke_ai_batch.offline plan $$s > /dev/null || exit 1; done
	$(PY) -m gke_ai_batch.conform --quiet $(foreach s,$(STACKS),out/$(s)/manifests) examples/workloads

check-all: $(PLANNING)  ## the offline policy check of every stack
	@mkdir -p out
	@for s in $(STACKS); do $(PY) -m gke_ai_batch.offline check $$s > out/check-$$s.txt || { cat out/check-$$s.txt; exit 1; }; \
	  tail -n 1 out/check-$$s.txt; done

golden: setup  ## rewrite the golden plans after a reviewed change
	UPDATE_GOLDEN=1 $(PY) -m pytest tests/test_golden.py

docs: $(PLANNING)  ## rewrite docs/gke-rules.md and the plan blocks of docs/scenarios/ after a reviewed change
	$(PY) docs/gke_rules_page.py
	$(PY) docs/update_plans.py

schema: $(PLANNING)  ## rewrite docs/stack.schema.json and docs/config-reference.md from the config model
	$(PY) docs/stack_docs.py

package-schema: setup  ## rewrite gke_ai_batch/schema.json (the component package schema) and docs/components-reference.md
	UPDATE_SCHEMA=1 $(PY) -m pytest -q tests/test_provider.py -k schema_is_current
	$(PY) docs/components_docs.py

bench: $(PLANNING)  ## the scale benchmark (docs/scale.md; minutes of both cores)
	$(PY) -m bench

clean:  ## remove out/
	rm -rf out
