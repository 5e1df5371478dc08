"""What an OpenCode run needs before it starts: the binaries, an isolated home, its config and environment.

Everything here follows `reference/scaffolds-offline.md` (OpenCode 1.18.33, sections B.4-B.6): a private
HOME/XDG/TMPDIR per run, a pre-seeded plugin folder (else OpenCode runs `npm install @opencode-ai/plugin`),
`rg` on PATH (else glob/grep try to download it), the network switches off, and a custom
`@ai-sdk/openai-compatible` provider pointing at the model relay with the relay's per-run token as its key.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from repoanchor.scaffolds.environments.local import command_environment
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.records import InfraError, Limits

OPENCODE_VERSION = "1.18.33"
REPO_ROOT = Path(__file__).resolve().parents[2]  # an editable install: scaffolds/opencode/ sits in the checkout
LOCAL_BINARY = REPO_ROOT / ".tools/opencode/node_modules/opencode-linux-x64/bin/opencode"
PROVIDER = "repoanchor"
CONTEXT_TOKENS, OUTPUT_TOKENS = 128000, 8192

OFFLINE = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    # A task repository's own opencode.json or .opencode/ would change the scaffold (and start an npm install).
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}
# With node_modules present and the plugin listed, OpenCode skips its background npm install.
PLUGIN_SEED = {
    "package.json": json.dumps({"dependencies": {"@opencode-ai/plugin": "*"}}),
    "package-lock.json": json.dumps(
        {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
    ),
}


def find_opencode() -> Path:
    """$REPOANCHOR_OPENCODE, else the project-local install, else `opencode` on PATH."""
    configured = os.environ.get("REPOANCHOR_OPENCODE")
    if configured:
        if Path(configured).is_file() and os.access(configured, os.X_OK):
            return Path(configured)
        raise InfraError("missing_binary", f"REPOANCHOR_OPENCODE={configured} is not an executable file")
    if LOCAL_BINARY.is_file():
        return LOCAL_BINARY
    found = shutil.which("opencode")
    if found:
        return Path(found)
    raise InfraError(
        "missing_binary",
        f"OpenCode not found: run `make` in {REPO_ROOT} (or `npm install opencode-ai@{OPENCODE_VERSION}` "
        "in .tools/opencode), or set REPOANCHOR_OPENCODE to the binary",
    )


def find_rg() -> Path:
    """ripgrep: the one the venv's `ripgrep` package installs next to the interpreter, else PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file():
        return beside
    found = shutil.which("rg")
    if found:
        return Path(found)
    raise InfraError("missing_binary", "ripgrep (rg) not found: `pip install ripgrep` (OpenCode's glob/grep need it)")


def model_id(model: ModelConfig) -> str:
    """The id sent upstream: litellm's `openai/` routing prefix is not part of the model's name."""
    return model.model.removeprefix("openai/")


def config(model: ModelConfig, base_url: str, key: str) -> dict:
    """OPENCODE_CONFIG_CONTENT: one custom provider at `base_url` (the relay), nothing else enabled; `key` is the
    relay's token (the agent's commands can read it; it opens only that relay, for that model, for this run)."""
    name = model_id(model)
    entry: dict = {
        "name": name,
        "tool_call": True,
        "temperature": True,  # else OpenCode sends no temperature at all
        "limit": {"context": CONTEXT_TOKENS, "output": OUTPUT_TOKENS},
    }
    if model.price_per_million is not None:
        entry["cost"] = {"input": model.price_per_million[0], "output": model.price_per_million[1]}
    provider = {
        "npm": "@ai-sdk/openai-compatible",  # bundled in the binary: nothing is downloaded
        "name": "repoanchor relay",
        "options": {"baseURL": base_url, "apiKey": key},
        "models": {name: entry},
    }
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: provider},
        "model": f"{PROVIDER}/{name}",
        "small_model": f"{PROVIDER}/{name}",
        "autoupdate": False,
        "share": "disabled",
        # `opencode run` auto-rejects an `ask` permission and ends the run there, and its bash tool asks for
        # `external_directory` whenever a command names a path outside the repository (`ls /usr/lib`): so
        # everything but the web is allowed, as `--auto` would. The environment is the sandbox.
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny", "external_directory": "allow"},
        "agent": {"build": {"temperature": model.temperature}},
    }


def variables(model: ModelConfig, limits: Limits, base_url: str, home: str, key: str) -> dict[str, str]:
    """The OpenCode-specific part of the process environment (`home` as OpenCode sees it)."""
    found = {
        **OFFLINE,
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_DATA_HOME": f"{home}/.local/share",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "XDG_STATE_HOME": f"{home}/.local/state",
        "OPENCODE_CONFIG_CONTENT": json.dumps(config(model, base_url, key)),
    }
    if limits.command_timeout:  # 0 means no limit: OpenCode's own default (2 minutes) then applies
        found["OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS"] = str(int(limits.command_timeout * 1000))
    return found


def seed_files() -> dict[str, str]:
    """Files (relative to the home) to create before the first start; `node_modules/` must exist too."""
    return {f".config/opencode/{name}": text for name, text in PLUGIN_SEED.items()}


def seed_home(home: Path) -> None:
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    (home / ".config/opencode/node_modules").mkdir(parents=True, exist_ok=True)
    for relative, text in seed_files().items():
        (home / relative).write_text(text, encoding="utf-8")


def local_environment(
    model: ModelConfig, limits: Limits, base_url: str, home: Path, rg: Path, key: str
) -> dict[str, str]:
    """OpenCode's environment on the host; its bash tool passes it on to the agent's commands, so it
    goes through the same allow-list (and secret-name check) as every agent command."""
    env = command_environment(home, variables(model, limits, base_url, str(home), key))
    env["PATH"] = os.pathsep.join([str(rg.parent), env.get("PATH") or os.defpath])
    return env
