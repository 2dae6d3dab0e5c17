"""Hidden check: SCXML <send> dispatches with no target, and sorts bad targets into error.communication / error.execution"""

from statemachine.io import load


def ids(sm):
    return {s.id for s in sm.configuration}


def machine(body, initial):
    doc = (
        '<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="%s">%s</scxml>'
        % (initial, body)
    )
    return load(doc, format="scxml")()


def test_untargeted_send_reaches_the_external_queue_with_params():
    sm = machine(
        """
        <datamodel><data id="total" expr="0"/></datamodel>
        <state id="idle">
          <transition event="order" target="packing">
            <send event="packed"><param name="boxes" expr="5"/></send>
          </transition>
        </state>
        <state id="packing">
          <transition event="packed" target="shipped">
            <assign location="total" expr="_event.data.boxes * 2"/>
          </transition>
        </state>
        <final id="shipped"/>
        """,
        "idle",
    )
    assert ids(sm) == {"idle"}
    sm.send("order")
    assert ids(sm) == {"shipped"}
    assert sm.model.total == 10


def test_unknown_scxml_session_raises_error_communication():
    sm = machine(
        """
        <state id="calling">
          <onentry><send event="hello" target="#_scxml_nobody42"/></onentry>
          <transition event="error.communication" target="unreachable"/>
          <transition event="hello" target="delivered"/>
          <transition event="error.execution" target="broken"/>
        </state>
        <final id="unreachable"/>
        <final id="delivered"/>
        <final id="broken"/>
        """,
        "calling",
    )
    assert ids(sm) == {"unreachable"}


def test_malformed_target_raises_error_execution():
    sm = machine(
        """
        <state id="start">
          <onentry><send event="leak" target="mailto:someone"/></onentry>
          <transition event="error.execution" target="rejected"/>
          <transition event="leak" target="leaked"/>
          <transition event="error.communication" target="lost"/>
        </state>
        <final id="rejected"/>
        <final id="leaked"/>
        <final id="lost"/>
        """,
        "start",
    )
    assert ids(sm) == {"rejected"}
