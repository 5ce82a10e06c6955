// The demo home page: copy buttons, and each tool's form calling the tool over the real MCP endpoint.
//
// A submit is one 2026-07-28 tools/call, POSTed to /mcp with the headers the revision mirrors
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) and the _meta envelope, the field values typed as the tool's
// inputSchema types them. A signed-in user calls through the Django session (with the CSRF token, as any
// Django POST from JavaScript); otherwise the call is anonymous, which the demo allows for signup only.
// The page is the user's form already, so the only thing it lets the server ask for is a URL-mode page;
// a multi-step tool's card is the exception: it lets the tool ask each step, as a client's form would.
(function () {
  "use strict";

  var page = JSON.parse(document.getElementById("demo-config").textContent);
  var CAPABILITIES = { elicitation: { url: {} } };
  var nextId = 1;

  // Copy buttons -------------------------------------------------------------------------------------

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "offscreen";
      document.body.appendChild(area);
      area.select();
      var copied = false;
      try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
      document.body.removeChild(area);
      if (copied) { resolve(); } else { reject(new Error("copy refused")); }
    });
  }

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-copy]"), function (button) {
    var label = button.textContent;
    var timer = null;
    function flash(text) {
      button.textContent = text;
      button.classList.add("copied");
      clearTimeout(timer);
      timer = setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1600);
    }
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      copyText(source.textContent).then(function () { flash("Copied"); }, function () {
        selectText(source);
        flash("Press Ctrl+C");
      });
    });
  });

  // The MCP call -------------------------------------------------------------------------------------

  function callTool(name, args, extra, capabilities) {
    var params = {
      name: name,
      arguments: args,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": page.protocolVersion,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": { name: "mcpforms-demo-page", version: "1" }
      }
    };
    Object.keys(extra || {}).forEach(function (key) { params[key] = extra[key]; });
    return fetch(page.endpoint, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": page.protocolVersion,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "X-CSRFToken": page.csrfToken
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: params })
    }).then(function (response) {
      return response.json().catch(function () {
        throw new Error("The endpoint answered " + response.status + " without a JSON-RPC body.");
      });
    }).then(function (body) {
      if (body.error) { throw new Error(body.error.message || "The call failed."); }
      return body.result;
    });
  }

  // One tool's form ----------------------------------------------------------------------------------

  function ToolForm(form, config) {
    this.form = form;
    this.config = config;
    this.name = config.tool;
    this.errors = document.getElementById(this.name + "-errors");
    this.status = document.getElementById(this.name + "-status");
    this.outcome = document.getElementById(this.name + "-outcome");
    this.button = form.querySelector("button[type=submit]");
    form.addEventListener("submit", this.submit.bind(this));
  }

  ToolForm.prototype.inputs = function (field) {
    return Array.prototype.slice.call(this.form.querySelectorAll('[name="' + field.name + '"]'));
  };

  // Typed as the tool's inputSchema types them, by mcpforms' own reading of a field (mcpformsFieldValue,
  // which home.html includes from mcpforms/field_values.js).
  ToolForm.prototype.readValue = function (field) {
    return mcpformsFieldValue(this.inputs(field), field.kind);
  };

  ToolForm.prototype.collect = function () {
    var args = {};
    var self = this;
    this.config.fields.forEach(function (field) {
      var value = self.readValue(field);
      if (value !== undefined) { args[field.name] = value; }
    });
    return args;
  };

  ToolForm.prototype.capabilities = CAPABILITIES;

  // The server names each field it refuses as "- Label (name): message" (and may send them structured).
  ToolForm.prototype.fieldErrors = function (result) {
    var structured = result.structuredContent && result.structuredContent.errors;
    if (structured && typeof structured === "object") { return { byField: structured, rest: [] }; }
    return this.problems(textOf(result));
  };

  // The "- Label (name): message" lines of a text, by field; a line that names no field is in `rest`.
  ToolForm.prototype.problems = function (text) {
    var names = this.config.fields.map(function (field) { return field.name; }).concat(this.config.pageOnly);
    var byField = {};
    var rest = [];
    text.split("\n").forEach(function (line) {
      if (line.indexOf("- ") !== 0) { return; }
      var best = null;
      names.forEach(function (name) {
        var at = line.indexOf(" (" + name + "): ");
        if (at !== -1 && (best === null || at < best.at)) { best = { name: name, at: at }; }
      });
      if (best === null) { rest.push(line.slice(2)); return; }
      var message = line.slice(best.at + best.name.length + 5);
      (byField[best.name] = byField[best.name] || []).push(message);
    });
    return { byField: byField, rest: rest };
  };

  ToolForm.prototype.showErrors = function (byField) {
    var first = null;
    var self = this;
    this.config.fields.forEach(function (field) {
      var box = document.getElementById(field.id + "_error");
      var messages = byField[field.name] || [];
      if (box) {
        box.textContent = "";
        messages.forEach(function (message) {
          var line = document.createElement("p");
          line.textContent = message;
          box.appendChild(line);
        });
      }
      self.inputs(field).forEach(function (input) {
        if (messages.length) { input.setAttribute("aria-invalid", "true"); } else { input.removeAttribute("aria-invalid"); }
      });
      if (messages.length && !first) { first = self.inputs(field)[0]; }
    });
    return first;
  };

  ToolForm.prototype.formError = function (heading, lines) {
    this.errors.textContent = "";
    var strong = document.createElement("p");
    strong.className = "form-errors-heading";
    strong.textContent = heading;
    this.errors.appendChild(strong);
    var self = this;
    (lines || []).forEach(function (text) {
      var line = document.createElement("p");
      line.textContent = text;
      self.errors.appendChild(line);
    });
  };

  ToolForm.prototype.reset = function () {
    this.errors.textContent = "";
    this.showErrors({});
    this.outcome.hidden = true;
    this.outcome.textContent = "";
    this.outcome.className = "outcome";
  };

  ToolForm.prototype.busy = function (text) {
    this.button.disabled = !!text;
    this.status.textContent = text || "";
  };

  ToolForm.prototype.submit = function (event) {
    event.preventDefault();
    this.reset();
    this.busy("Calling " + this.name + "…");
    this.send(this.collect(), {});
  };

  ToolForm.prototype.send = function (args, extra) {
    var self = this;
    callTool(this.name, args, extra, this.capabilities).then(function (result) {
      self.busy("");
      self.handle(result, args);
    }, function (error) {
      self.busy("");
      self.formError("The call did not go through.", [error.message]);
    });
  };

  ToolForm.prototype.handle = function (result, args) {
    if (result.resultType === "input_required") { this.asked(result, args); }
    else if (result.isError) { this.refused(result); }
    else { this.done(result); }
  };

  // isError: Django said no. Each message goes next to its field; what names no field goes on top.
  ToolForm.prototype.refused = function (result) {
    var found = this.fieldErrors(result);
    var first = this.showErrors(found.byField);
    var count = Object.keys(found.byField).length;
    if (count) {
      var heading = count === 1 ? "One field needs your attention." : count + " fields need your attention.";
      this.formError(heading + " Nothing was submitted.", found.rest);
    } else {
      this.formError("The tool refused the call.", [textOf(result) || "No reason was given."]);
    }
    if (first) { first.focus(); } else { this.errors.scrollIntoView({ block: "nearest" }); }
  };

  // input_required: the server needs something this form cannot give here. A URL-mode page is opened by
  // the user; a form elicitation names the fields still missing.
  ToolForm.prototype.asked = function (result, args) {
    var self = this;
    var requests = result.inputRequests || {};
    var keys = Object.keys(requests);
    var panel = this.panel("asked", "More input needed");
    keys.forEach(function (key) {
      var params = (requests[key] && requests[key].params) || {};
      if (params.mode === "url") {
        self.note(panel, params.message || "Continue on the page of this form.");
        var link = document.createElement("a");
        link.className = "btn";
        link.href = params.url;
        link.target = "_blank";
        link.rel = "noopener";
        link.textContent = "Open the URL-mode page";
        var again = document.createElement("button");
        again.type = "button";
        again.className = "btn btn-ghost";
        again.textContent = "I submitted the page: get the result";
        again.addEventListener("click", function () {
          self.busy("Asking " + self.name + " for the result…");
          var answers = {};
          answers[key] = { action: "accept" };
          self.send(args, { inputResponses: answers, requestState: result.requestState });
        });
        var row = document.createElement("div");
        row.className = "outcome-actions";
        row.appendChild(link);
        row.appendChild(again);
        panel.appendChild(row);
      } else {
        var schema = params.requestedSchema || {};
        var missing = Object.keys(schema.properties || {});
        var byField = {};
        (schema.required || missing).forEach(function (name) { byField[name] = ["The server asks for this field."]; });
        self.showErrors(byField);
        self.note(panel, "Missing: " + (missing.join(", ") || "nothing the form names") + ".");
        if (params.message) { self.note(panel, params.message); }
      }
    });
    this.outcome.focus();
  };

  ToolForm.prototype.done = function (result) {
    var approval = this.config.approval;
    var panel = this.panel("done", this.config.title + (approval ? ": sent for approval" : ": done"));
    // An approval tool's call only queues the request: nothing has run until someone approves it.
    this.note(panel, approval ? "The request waits in the admin; the tool said:" : "The tool ran once and returned:");
    var pre = document.createElement("pre");
    pre.className = "code";
    var data = result.structuredContent;
    pre.textContent = data !== undefined ? JSON.stringify(data, null, 2) : textOf(result);
    panel.appendChild(pre);
    this.outcome.focus();
  };

  ToolForm.prototype.panel = function (kind, heading) {
    this.outcome.textContent = "";
    this.outcome.className = "outcome outcome-" + kind;
    var title = document.createElement("p");
    title.className = "outcome-title";
    title.textContent = heading;
    this.outcome.appendChild(title);
    this.outcome.hidden = false;
    return this.outcome;
  };

  ToolForm.prototype.note = function (panel, text) {
    var line = document.createElement("p");
    line.textContent = text;
    panel.appendChild(line);
  };

  // A multi-step tool, walked as a client walks it. The first call passes only the hidden fields and
  // declares form elicitation; each input_required result asks one step, which the page shows alone under
  // the tool's own heading ("Step 2 of at most 3: Dates and budget"), with only the fields asked. The
  // answer goes back as inputResponses with the requestState, and the tool asks the next step (or the same
  // one again, with Django's messages) until its result. Which step comes next is the tool's decision: the
  // page only marks the steps the tool went past without asking as skipped.
  var WIZARD_CAPABILITIES = { elicitation: { form: {}, url: {} } };
  var STEP_STATES = { done: "answered", current: "asked now", skipped: "skipped: not needed for these answers" };

  function WizardForm(form, config) {
    ToolForm.call(this, form, config);
    this.callLabel = this.button.innerHTML;
    this.declineButton = form.querySelector("[data-decline]");
    this.declineButton.addEventListener("click", this.decline.bind(this));
    this.round = null; // the step being asked: its input key, requestState, the call's arguments, its fields
    this.answered = {}; // the steps answered in this call, by name
  }

  WizardForm.prototype = Object.create(ToolForm.prototype);
  WizardForm.prototype.constructor = WizardForm;
  WizardForm.prototype.capabilities = WIZARD_CAPABILITIES;

  WizardForm.prototype.submit = function (event) {
    event.preventDefault();
    this.reset();
    var round = this.round;
    if (!round) {
      this.answered = {};
      this.mark(null, false);
      this.busy("Calling " + this.name + "…");
      this.send(this.arguments(), {});
      return;
    }
    var content = {};
    var self = this;
    round.fields.forEach(function (field) {
      var value = self.readValue(field);
      if (value !== undefined) { content[field.name] = value; }
    });
    this.answered[round.step] = true;
    this.reply({ action: "accept", content: content }, "Sending the step…");
  };

  WizardForm.prototype.decline = function () {
    this.reset();
    this.reply({ action: "decline" }, "Declining…");
  };

  WizardForm.prototype.reply = function (response, status) {
    var answers = {};
    answers[this.round.key] = response;
    this.declining = response.action === "decline";
    this.busy(status);
    this.send(this.round.args, { inputResponses: answers, requestState: this.round.state });
  };

  WizardForm.prototype.arguments = function () {
    var args = {};
    var self = this;
    this.config.fields.forEach(function (field) {
      if (self.config.arguments.indexOf(field.name) === -1) { return; }
      var value = self.readValue(field);
      if (value !== undefined) { args[field.name] = value; }
    });
    return args;
  };

  WizardForm.prototype.busy = function (text) {
    ToolForm.prototype.busy.call(this, text);
    this.declineButton.disabled = !!text;
  };

  WizardForm.prototype.handle = function (result, args) {
    var requests = result.inputRequests || {};
    var key = Object.keys(requests)[0];
    var params = (key !== undefined && requests[key].params) || {};
    if (result.resultType === "input_required" && params.mode === "form") {
      this.ask(key, params, result.requestState, args);
      return;
    }
    var declined = this.declining && result.isError;
    this.end(!result.isError);
    if (declined) {
      this.note(this.panel("declined", this.config.title + ": declined"), textOf(result));
      this.outcome.focus();
    } else {
      ToolForm.prototype.handle.call(this, result, args);
    }
  };

  // One round: the step whose fields the tool asks for, alone, with only those fields.
  WizardForm.prototype.ask = function (key, params, state, args) {
    var names = Object.keys((params.requestedSchema || {}).properties || {});
    var step = this.config.steps.filter(function (candidate) {
      return names.some(function (name) { return candidate.fields.indexOf(name) !== -1; });
    })[0];
    if (!step) {
      this.end(false);
      this.formError("The tool asked for something this page cannot show.", [params.message || ""]);
      return;
    }
    this.round = {
      key: key,
      state: state,
      args: args,
      step: step.name,
      fields: this.config.fields.filter(function (field) { return names.indexOf(field.name) !== -1; })
    };
    // "Step k of at most N: title", after a note if the form started over, then Django's messages.
    var lines = (params.message || "").split("\n");
    var at = Math.max(0, lines.findIndex(function (line) { return /^Step \d+ of at most \d+/.test(line); }));
    var shown = this.show(step.name, lines[at], names);
    this.mark(step.name, false);
    var found = this.problems(lines.slice(at + 1).join("\n"));
    this.showErrors(found.byField);
    var notes = lines.slice(0, at);
    if (notes.length || found.rest.length) {
      this.formError(notes.length ? notes.join(" ") : "Please correct this step.", found.rest);
    }
    this.button.textContent = "Send " + lines[at].split(":")[0].replace(/ of at most \d+/, "").toLowerCase();
    this.declineButton.hidden = false;
    var first = shown.querySelector("[aria-invalid=true]") ||
      shown.querySelector(".field:not([hidden]) input, .field:not([hidden]) select, .field:not([hidden]) textarea");
    if (first) { first.focus(); }
  };

  WizardForm.prototype.show = function (stepName, heading, names) {
    var shown = null;
    Array.prototype.forEach.call(this.form.querySelectorAll("fieldset.wizard-step"), function (fieldset) {
      fieldset.hidden = fieldset.getAttribute("data-step") !== stepName;
      if (fieldset.hidden) { return; }
      shown = fieldset;
      fieldset.querySelector("legend").textContent = heading;
      Array.prototype.forEach.call(fieldset.querySelectorAll(".field[data-field]"), function (box) {
        box.hidden = names.indexOf(box.getAttribute("data-field")) === -1;
      });
    });
    return shown;
  };

  // The call is over (a result, a refusal or a decline): back to the call button, no step shown.
  WizardForm.prototype.end = function (completed) {
    this.round = null;
    this.show(null, "", []);
    this.button.innerHTML = this.callLabel;
    this.declineButton.hidden = true;
    this.mark(null, completed);
  };

  // The overview of the steps: answered, asked now, skipped (the tool went past it without asking it), or
  // still to come; after a completed call every step is answered or skipped.
  WizardForm.prototype.mark = function (current, completed) {
    var names = this.config.steps.map(function (step) { return step.name; });
    var at = names.indexOf(current);
    var answered = this.answered;
    Array.prototype.forEach.call(this.form.querySelectorAll(".wizard-steps li"), function (item) {
      var index = names.indexOf(item.getAttribute("data-step"));
      var state = "";
      if (index === at) { state = "current"; }
      else if (completed || index < at) { state = answered[names[index]] ? "done" : "skipped"; }
      item.setAttribute("data-state", state);
      item.querySelector(".wizard-step-state").textContent = STEP_STATES[state] || "";
    });
  };

  function textOf(result) {
    return (result.content || []).filter(function (block) { return block.type === "text"; })
      .map(function (block) { return block.text; }).join("\n");
  }

  Array.prototype.forEach.call(document.querySelectorAll("form.tool-form"), function (form) {
    var config = page.tools[form.getAttribute("data-tool")];
    if (!config) { return; }
    var Kind = config.steps ? WizardForm : ToolForm;
    new Kind(form, config);
  });
})();
