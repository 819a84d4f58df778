"""The installed kernel against `jupyter_kernel_test` (PyPI), the Jupyter project's own
protocol conformance suite: every reply and iopub message is validated against the
messaging spec's schemas (kernel_info, execute with stdout/stderr, execute_result,
display_data, error, completion, is_complete, history tail/range/search, inspect,
clear_output).

Not covered, as the kernel does not offer it: the pager (a `page` payload)."""

import jupyter_kernel_test
import pytest
from jupyter_client.manager import start_new_kernel


@pytest.mark.usefixtures("jupyter_path")
class BachConformance(jupyter_kernel_test.KernelTests):
    kernel_name = "bach"
    language_name = "rust"
    file_extension = ".rs"

    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = start_new_kernel(kernel_name=cls.kernel_name, startup_timeout=300)
        # The suite gives each reply 15 s; the first cell waits for evcxr and the prelude to
        # start (about 10 s here), so wait for that once, before the timed requests.
        reply = cls.kc.execute_interactive("let started = 1;", timeout=600)
        assert reply["content"]["status"] == "ok", reply["content"]

    code_hello_world = 'println!("hello, world");'
    code_stderr = 'eprintln!("to stderr");'
    completion_samples = [{"text": "std::collections::Hash", "matches": {"HashMap", "HashSet"}}]
    complete_code_samples = ["1 + 1", "let x = 1;", "fn f() -> i32 { 3 }", "struct P { x: f64 }"]
    incomplete_code_samples = ["let x = {", "fn f() {", 'let s = "open', "let v = vec![1,"]
    invalid_code_samples = ["let = 5;", ")", "fn 1f() {}", "let x = 1 +;"]
    code_generate_error = 'panic!("boom")'
    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": '"hi".to_string()', "result": '"hi"'},
        {"code": "Array1::<f64>::ones(4).sum_lazy().to_scalar().unwrap()", "result": "4.0"},
    ]
    code_display_data = [
        # 8192 elements: above the size that runs at once without a plan (4096).
        {"code": "let _ = Array1::<f64>::ones(8192).sum();\n:bach trace last", "mime": "image/svg+xml"},
        {"code": "Array1::<f64>::ones(8192).sum_lazy()", "mime": "text/html"},
        {"code": "Array1::<f64>::ones(8192).sqrt()", "mime": "text/html"},
    ]
    code_history_pattern = "6 *"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "Vec::new"
    code_clear_output = "bach::notebook::clear_output(false);"
