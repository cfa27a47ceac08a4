# Offline plan and check need no cloud, no credentials and no Pulumi CLI.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STACK ?= dev
OUT ?=
STACKS := $(patsubst stacks/Pulumi.%.yaml,%,$(wildcard stacks/Pulumi.*.yaml))
out_flag = $(if $(OUT),--out $(OUT))

WORKLOAD ?= examples/workloads

.PHONY: setup plan check admit admit-all test lint reuse conform check-all golden docs package-schema bench clean

$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

setup: $(VENV)/.installed

plan: setup  ## make plan STACK=<name|path> [OUT=dir]
	$(PY) -m gke_ai_batch.offline plan $(STACK) $(out_flag)

check: setup  ## make check STACK=<name|path> [OUT=dir] [POLICY_CONFIG=file.json]
	$(PY) -m gke_ai_batch.offline check $(STACK) $(out_flag) $(if $(POLICY_CONFIG),--policy-config $(POLICY_CONFIG))

admit: setup  ## make admit STACK=<name|path> WORKLOAD=<file or folder>: would Kueue admit each workload?
	$(PY) -m gke_ai_batch.offline.admit $(STACK) $(WORKLOAD)

admit-all: setup  ## every sample workload against the stack it is named after
	@for f in examples/workloads/*.yaml; do s=$$(basename $$f .yaml); $(PY) -m gke_ai_batch.offline.admit $$s $$f || exit 1; done

test: setup
	$(PY) -m pytest

TYPECHECK := build/typecheck
lint: setup  ## ruff over the repository, mypy --strict over the package (through a link tree of its installed layout)
	$(VENV)/bin/ruff check .
	@rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/gke_ai_batch
	@for f in gke_ai_batch/*; do ln -s "$$PWD/$$f" $(TYPECHECK)/gke_ai_batch/; done
	@ln -s "$$PWD/components" "$$PWD/policies" $(TYPECHECK)/gke_ai_batch/
	cd $(TYPECHECK) && $(CURDIR)/$(VENV)/bin/mypy --config-file $(CURDIR)/pyproject.toml -p gke_ai_batch

REUSE := build/reuse
reuse: setup  ## build the wheel, install it in a fresh virtualenv, and plan and check examples/reuse with it
	rm -rf $(REUSE) && $(PY) -m build --wheel --outdir $(REUSE)/dist . > /dev/null
	$(PYTHON) -m venv $(REUSE)/venv
	$(REUSE)/venv/bin/pip install -q --disable-pip-version-check $(REUSE)/dist/*.whl
	cd examples/reuse && $(CURDIR)/$(REUSE)/venv/bin/python -m gke_ai_batch.offline check dev | tail -n 1

conform: setup  ## render every stack and run kube-conform over all manifests
	@for s in $(STACKS); do $(PY) -m gke_ai_batch.offline plan $$s > /dev/null || exit 1; done
	$(PY) ../shared/tools/kube-conform --quiet $(foreach s,$(STACKS),out/$(s)/manifests) examples/workloads

check-all: setup  ## the offline policy check of every stack
	@mkdir -p out
	@for s in $(STACKS); do $(PY) -m gke_ai_batch.offline check $$s > out/check-$$s.txt || { cat out/check-$$s.txt; exit 1; }; \
	  tail -n 1 out/check-$$s.txt; done

golden: setup  ## rewrite the golden plans after a reviewed change
	UPDATE_GOLDEN=1 $(PY) -m pytest tests/test_golden.py

docs: setup  ## rewrite docs/gke-rules.md and the plan blocks of docs/scenarios/ after a reviewed change
	$(PY) docs/gke_rules_page.py
	$(PY) docs/update_plans.py

package-schema: setup  ## rewrite provider/schema.json (the component package schema) after a reviewed change
	UPDATE_SCHEMA=1 $(PY) -m pytest -q tests/test_provider.py -k schema_is_current

bench: setup
	$(PY) -m bench

clean:
	rm -rf out
